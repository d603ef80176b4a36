package storage

import (
	"os"
	"syscall"
	"testing"
)

// allocatedBytes is the disk space a file occupies (st_blocks * 512).
func allocatedBytes(t *testing.T, f *os.File) (size, alloc int64) {
	t.Helper()
	fi, err := f.Stat()
	must(t, err)
	return fi.Size(), fi.Sys().(*syscall.Stat_t).Blocks * 512
}

// TestPreallocateKeepsSize checks fallocate(KEEP_SIZE): space is reserved,
// the size (which recovery trusts) is not changed, and sealing gives the
// unused space back. A file system without fallocate must leave the
// segment unreserved and untrimmed.
func TestPreallocateKeepsSize(t *testing.T) {
	const reserve = 8 << 20
	s, err := createSegment(t.TempDir(), 0, reserve, 16)
	must(t, err)
	defer s.release()
	size, alloc := allocatedBytes(t, s.log)
	if size != 0 {
		t.Fatalf("preallocation changed the size to %d", size)
	}
	if !s.preallocated {
		if alloc != 0 {
			t.Fatalf("not preallocated but %d bytes allocated", alloc)
		}
		return // the file system has no fallocate: the plain path, checked above
	}
	if alloc < reserve {
		t.Fatalf("preallocated only %d of %d bytes", alloc, reserve)
	}
	data := randomBytes(100_000)
	if _, err := s.log.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	s.size = int64(len(data))
	must(t, s.seal(true))
	size, alloc = allocatedBytes(t, s.log)
	if size != int64(len(data)) || alloc >= reserve {
		t.Fatalf("after seal: size %d (want %d), %d bytes still allocated", size, len(data), alloc)
	}
}
