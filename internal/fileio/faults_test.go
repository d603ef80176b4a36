package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  Rule
		file  string
		calls int
		fail  []bool // per call
	}{
		{"nth call", Rule{Ops: OpWrite, After: 2, Times: 1, Err: syscall.EIO}, "a.log", 4, []bool{false, false, true, false}},
		{"until cleared", Rule{Ops: OpWrite, After: 1, Err: syscall.EIO}, "a.log", 4, []bool{false, true, true, true}},
		{"name matches", Rule{Name: "*.log", Err: syscall.ENOSPC}, "a.log", 2, []bool{true, true}},
		{"name does not match", Rule{Name: "*.index", Err: syscall.ENOSPC}, "a.log", 2, []bool{false, false}},
		{"other op", Rule{Ops: OpSync, Err: syscall.EIO}, "a.log", 2, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi := &Faults{Base: OS{}}
			fi.Add(tc.rule)
			for i := range tc.calls {
				_, err := fi.WriteAt(f, []byte("abc"), int64(3*i))
				if got := err != nil; got != tc.fail[i] {
					t.Fatalf("call %d: err %v, want failure %v", i+1, err, tc.fail[i])
				}
				if err != nil && !errors.Is(err, tc.rule.Err) {
					t.Fatalf("call %d: %v, want %v", i+1, err, tc.rule.Err)
				}
			}
			fi.Clear()
			if _, err := fi.WriteAt(f, []byte("x"), 0); err != nil {
				t.Fatalf("after Clear: %v", err)
			}
		})
	}
}

// TestFaultsPartial: a short write writes the given prefix, then fails.
func TestFaultsPartial(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi := &Faults{Base: OS{}}
	fi.Add(Rule{Ops: OpWrite, Err: syscall.ENOSPC, Partial: 4, Times: 1})
	n, err := fi.WriteAt(f, []byte("0123456789"), 0)
	if n != 4 || !errors.Is(err, syscall.ENOSPC) || !NoSpace(err) {
		t.Fatalf("wrote %d, %v; want 4 and ENOSPC", n, err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "0123" {
		t.Fatalf("file holds %q", b)
	}
	if fi.Injected() != 1 {
		t.Fatalf("injected %d", fi.Injected())
	}
	if NoSpace(syscall.EIO) {
		t.Fatal("EIO classified as no space")
	}
}
