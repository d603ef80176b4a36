//go:build linux || darwin || freebsd

package storage

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSendfileChunk keeps each sendfile call below the kernel's per-call cap.
const maxSendfileChunk = 1 << 30

// sendfileFunc sends up to n bytes of file in, starting at offset off, to
// out with one sendfile call. It returns the bytes sent, which BSD systems
// report even together with EAGAIN or EINTR. It must neither use nor move
// the file position of in: the descriptor is shared by concurrent readers.
type sendfileFunc func(out, in int, off int64, n int) (int, error)

// sendfile copies the extent with this OS's sendfile (sendfileChunk).
// handled is false when the destination cannot take it (nothing was
// written then).
func (e *Extent) sendfile(sc syscall.Conn) (written int64, handled bool, err error) {
	return e.sendfileWith(sc, sendfileChunk, sendfileUnsupported)
}

// sendfileWith runs the sendfile loop with send, so that the loop is the
// same on every OS and can be driven by a test. unsupported tells which
// errors mean the destination cannot take sendfile.
func (e *Extent) sendfileWith(sc syscall.Conn, send sendfileFunc, unsupported func(error) bool) (written int64, handled bool, err error) {
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var werr error
	in, base := e.sendfileSource()
	err = rc.Write(func(fd uintptr) bool {
		for written < e.Len {
			n, err := send(int(fd), in, base+e.Pos+written, int(min(e.Len-written, maxSendfileChunk)))
			if n > 0 {
				written += int64(n)
			}
			switch {
			case err == unix.EAGAIN:
				if written < e.Len {
					return false // wait until writable
				}
			case err == unix.EINTR:
			case err != nil:
				werr = err
				return true
			case n <= 0:
				werr = io.ErrUnexpectedEOF
				return true
			}
		}
		return true
	})
	if written == 0 && werr != nil && unsupported(werr) {
		return 0, false, nil // destination does not support sendfile
	}
	if err == nil {
		err = werr
	}
	if err != nil {
		err = fmt.Errorf("sendfile %s: %w", e.path(), err)
	}
	return written, true, err
}

// errnoIn reports whether err is one of the given errnos.
func errnoIn(err error, errnos ...unix.Errno) bool {
	for _, en := range errnos {
		if errors.Is(err, en) {
			return true
		}
	}
	return false
}

// sendfileSource is the descriptor sendfile reads and what to add to a log
// position to get its offset there.
func (e *Extent) sendfileSource() (fd int, add int64) {
	if e.chunk != nil {
		return int(e.chunk.File().Fd()), -e.chunk.Base()
	}
	return e.seg.logFd, 0
}
