//go:build darwin || freebsd

package storage

import "golang.org/x/sys/unix"

// sendfileChunk is one sendfile(2) on macOS or FreeBSD. Both take the
// offset by value, leave the file position alone and report the bytes sent
// even when they fail with EAGAIN or EINTR after a partial send; the x/sys
// wrapper dereferences the offset pointer without advancing it, so the loop
// advances it from the returned count.
func sendfileChunk(out, in int, off int64, n int) (int, error) {
	return unix.Sendfile(out, in, &off, n)
}

// sendfileUnsupported reports errors meaning the destination cannot take
// sendfile: both systems send only to stream sockets (ENOTSOCK for a file,
// EOPNOTSUPP/ENOTSUP or EINVAL for other sockets), and ENOSYS.
func sendfileUnsupported(err error) bool {
	return errnoIn(err, unix.ENOTSOCK, unix.EOPNOTSUPP, unix.ENOTSUP, unix.EINVAL, unix.ENOSYS)
}
