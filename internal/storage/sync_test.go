package storage

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestSyncData runs this OS's data sync on a written file and checks that a
// failure (a closed file) is reported, not swallowed.
func TestSyncData(t *testing.T) {
	f, err := openFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	must(t, err)
	if _, err := f.WriteAt(randomBytes(10_000), 0); err != nil {
		t.Fatal(err)
	}
	if err := syncData(f); err != nil {
		t.Fatalf("sync: %v", err)
	}
	must(t, f.Close())
	if err := syncData(f); err == nil {
		t.Fatal("sync of a closed file succeeded")
	}
}

// TestSyncDir syncs a directory after creating a name in it.
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	if err := syncDir(dir); err != nil {
		t.Fatalf("sync dir: %v", err)
	}
}

// TestOpenFileRemoveWhileOpen pins what retention and purge rely on, on
// every OS (on Windows it needs FILE_SHARE_DELETE): a segment file can be
// removed while open, the open file stays readable and writable, and a new
// file of the same name can be created.
func TestOpenFileRemoveWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), segmentStem(0)+logSuffix)
	f, err := openFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	must(t, err)
	defer f.Close()
	data := randomBytes(5000)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(path))
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("name still there after remove: %v", err)
	}
	got := make([]byte, len(data))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after remove: %v", err)
	}
	if _, err := f.WriteAt([]byte("more"), int64(len(data))); err != nil {
		t.Fatalf("write after remove: %v", err)
	}
	g, err := openFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatalf("re-create after remove: %v", err)
	}
	must(t, g.Close())
}

// TestOpenFileFlags checks the flag combinations segments use: create
// truncates, plain open requires the file, open-or-create keeps content.
func TestOpenFileFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if _, err := openFile(path, os.O_RDWR, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing file: %v", err)
	}
	must(t, os.WriteFile(path, []byte("hello"), 0o644))
	for _, tc := range []struct {
		name string
		flag int
		want string
	}{
		{"open existing", os.O_RDWR, "hello"},
		{"open or create", os.O_RDWR | os.O_CREATE, "hello"},
		{"create truncates", os.O_RDWR | os.O_CREATE | os.O_TRUNC, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := openFile(path, tc.flag, 0o644)
			must(t, err)
			defer f.Close()
			fi, err := f.Stat()
			must(t, err)
			if fi.Size() != int64(len(tc.want)) {
				t.Fatalf("size %d, want %d", fi.Size(), len(tc.want))
			}
			if tc.want == "" {
				return
			}
			b := make([]byte, len(tc.want))
			if _, err := f.ReadAt(b, 0); err != nil || string(b) != tc.want {
				t.Fatalf("read %q: %v", b, err)
			}
		})
	}
}
