//go:build linux && (amd64 || arm64) && !race

package rawio

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// iovMax is the kernel's bound on the vectors of one writev (IOV_MAX).
const iovMax = 1024

// WriteAt writes b at off in f, as f.WriteAt does: a short write comes
// with a non-nil error.
func WriteAt(f *os.File, b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return f.WriteAt(b, off)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return f.WriteAt(b, off)
	}
	var n int
	var errno syscall.Errno
	cerr := rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			r, _, e := syscall.RawSyscall6(syscall.SYS_PWRITE64, fd,
				uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n), uintptr(off+int64(n)), 0, 0)
			switch {
			case e == syscall.EINTR:
				continue
			case e != 0:
				errno = e
				return true
			case r == 0:
				errno = syscall.EIO // a regular file never takes nothing
				return true
			}
			n += int(r)
		}
		return true
	})
	if cerr != nil {
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: cerr}
	}
	if errno != 0 {
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: errno}
	}
	return n, nil
}

// Conn reads from and writes to one connection. One goroutine may read
// while another writes; it is not safe for concurrent reads or for
// concurrent writes.
type Conn struct {
	c  net.Conn
	rc syscall.RawConn // nil: the ordinary path only

	// The reader's call: its buffer and outcome, and the callback
	// bound once (a closure per call would be an allocation per call).
	rbuf   []byte
	rn     int
	rerrno syscall.Errno
	readFn func(uintptr) bool

	// The writer's call, likewise.
	wv      net.Buffers
	one     [1][]byte // Write's vector
	wn      int64
	werrno  syscall.Errno
	iov     []syscall.Iovec
	writeFn func(uintptr) bool
}

// NewConn returns the Conn of c. Only plain TCP and Unix connections take
// the raw path; any other (TLS) takes the ordinary one.
func NewConn(c net.Conn) *Conn {
	x := &Conn{c: c}
	var rc syscall.RawConn
	var err error
	switch t := c.(type) {
	case *net.TCPConn:
		rc, err = t.SyscallConn()
	case *net.UnixConn:
		rc, err = t.SyscallConn()
	default:
		return x
	}
	if err != nil {
		return x
	}
	x.rc = rc
	x.readFn = x.read
	x.writeFn = x.writev
	return x
}

// Read implements io.Reader over the connection, honouring its read
// deadline.
func (x *Conn) Read(p []byte) (int, error) {
	if x.rc == nil || len(p) == 0 {
		return x.c.Read(p)
	}
	x.rbuf, x.rn, x.rerrno = p, 0, 0
	err := x.rc.Read(x.readFn)
	n, errno := x.rn, x.rerrno
	x.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, x.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (x *Conn) read(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&x.rbuf[0])), uintptr(len(x.rbuf)))
		switch e {
		case 0:
			x.rn = int(r)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // park in the poller until readable
		default:
			x.rerrno = e
			return true
		}
	}
}

// Write implements io.Writer over the connection, honouring its write
// deadline.
func (x *Conn) Write(p []byte) (int, error) {
	if x.rc == nil {
		return x.c.Write(p)
	}
	x.one[0] = p
	n, err := x.WriteBuffers(x.one[:])
	return int(n), err
}

// WriteBuffers writes every byte of v, as v.WriteTo(conn) does, honouring
// the connection's write deadline. v is consumed.
func (x *Conn) WriteBuffers(v net.Buffers) (int64, error) {
	if x.rc == nil {
		return v.WriteTo(x.c)
	}
	x.wv, x.wn, x.werrno = v, 0, 0
	err := x.rc.Write(x.writeFn)
	clear(x.wv)
	n, errno := x.wn, x.werrno
	x.wv = nil
	clear(x.iov[:cap(x.iov)]) // do not pin the written buffers
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, x.opError("write", errno)
	}
	return n, nil
}

func (x *Conn) writev(fd uintptr) bool {
	for {
		x.iov = x.iov[:0]
		for _, b := range x.wv {
			if len(x.iov) == iovMax {
				break
			}
			if len(b) > 0 {
				iv := syscall.Iovec{Base: &b[0]}
				iv.SetLen(len(b))
				x.iov = append(x.iov, iv)
			}
		}
		if len(x.iov) == 0 {
			x.wv = x.wv[:0]
			return true
		}
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&x.iov[0])), uintptr(len(x.iov)))
		switch e {
		case 0:
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // park in the poller until writable
		default:
			x.werrno = e
			return true
		}
		x.wn += int64(r)
		x.wv = consume(x.wv, int64(r))
	}
}

func (x *Conn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: x.c.LocalAddr().Network(), Source: x.c.LocalAddr(), Addr: x.c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}

// consume drops the first n bytes of v.
func consume(v net.Buffers, n int64) net.Buffers {
	for len(v) > 0 && n >= int64(len(v[0])) {
		n -= int64(len(v[0]))
		v[0] = nil
		v = v[1:]
	}
	if len(v) > 0 {
		v[0] = v[0][n:]
	}
	return v
}
