package storage

import "golang.org/x/sys/unix"

// preallocate reserves n bytes of disk for the file fd with
// fallocate(FALLOC_FL_KEEP_SIZE): blocks are allocated but the file size
// stays as it is, so recovery (which trusts the size) is unaffected and
// ftruncate to the written size releases what was not used. File systems
// without fallocate answer EOPNOTSUPP; a full one ENOSPC.
func preallocate(fd int, n int64) error {
	return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, n)
}
