package storage

import "golang.org/x/sys/unix"

// sendfileChunk is one sendfile(2) with an explicit offset. Linux reads
// from *offset and advances the copy it is given, never the file position;
// the copy is discarded because the loop tracks the offset itself.
func sendfileChunk(out, in int, off int64, n int) (int, error) {
	return unix.Sendfile(out, in, &off, n)
}

// sendfileUnsupported reports errors meaning the destination cannot take
// sendfile: EINVAL (not a socket or file it can write to) or ENOSYS.
func sendfileUnsupported(err error) bool {
	return errnoIn(err, unix.EINVAL, unix.ENOSYS)
}
