package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSendfileLinuxToFile sends with the real sendfile(2) into a regular
// file (Linux accepts any destination): bytes intact, source position
// untouched.
func TestSendfileLinuxToFile(t *testing.T) {
	data := randomBytes(500_000)
	e := fileExtent(t, data, 99, 400_000)
	dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
	must(t, err)
	defer dst.Close()
	written, handled, err := e.sendfile(dst)
	if err != nil || !handled || written != e.Len {
		t.Fatalf("sent %d of %d, handled %v: %v", written, e.Len, handled, err)
	}
	got, err := os.ReadFile(dst.Name())
	must(t, err)
	if !bytes.Equal(got, data[99:400_099]) {
		t.Fatal("sent bytes differ")
	}
	if p := filePos(t, e); p != 0 {
		t.Fatalf("file position moved to %d", p)
	}
}

// TestSendfileUnsupportedLinux pins which errnos make WriteTo fall back.
func TestSendfileUnsupportedLinux(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{unix.EINVAL, true},
		{unix.ENOSYS, true},
		{fmt.Errorf("wrapped: %w", unix.EINVAL), true},
		{unix.EPIPE, false},
		{unix.EIO, false},
		{unix.EAGAIN, false},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			if got := sendfileUnsupported(tc.err); got != tc.want {
				t.Fatalf("sendfileUnsupported(%v) = %v", tc.err, got)
			}
		})
	}
}
