//go:build linux || darwin || freebsd

package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeRawConn is a syscall.Conn whose descriptor is always "writable
// again": Write calls f until it reports done, counting the waits. That
// lets a test return EAGAIN from a fake sendfile deterministically.
type fakeRawConn struct {
	fd    uintptr
	waits int
}

func (c *fakeRawConn) SyscallConn() (syscall.RawConn, error) { return c, nil }
func (c *fakeRawConn) Control(f func(fd uintptr)) error      { f(c.fd); return nil }
func (c *fakeRawConn) Read(f func(fd uintptr) bool) error    { return c.Write(f) }
func (c *fakeRawConn) Write(f func(fd uintptr) bool) error {
	for !f(c.fd) {
		if c.waits++; c.waits > 1_000_000 {
			return errors.New("fake conn: too many waits")
		}
	}
	return nil
}

// bsdSendfile imitates BSD sendfile: it reads from the source with pread at
// the offset it is given (advancing nothing), sends at most chunk bytes and,
// on a schedule, reports partial sends together with EAGAIN or EINTR, as
// macOS and FreeBSD do.
type bsdSendfile struct {
	chunk int
	calls int
	out   int
	got   bytes.Buffer
	offs  []int64
}

func (b *bsdSendfile) send(out, in int, off int64, n int) (int, error) {
	b.calls++
	b.out = out
	b.offs = append(b.offs, off)
	buf := make([]byte, min(n, b.chunk))
	m, err := unix.Pread(in, buf, off)
	if err != nil {
		return 0, err
	}
	b.got.Write(buf[:m])
	if m == 0 {
		return 0, nil
	}
	switch b.calls % 4 {
	case 1:
		return m, unix.EAGAIN
	case 2:
		return m, unix.EINTR
	}
	return m, nil
}

// TestSendfileLoop drives the shared sendfile loop with BSD semantics on any
// Unix, so the offset bookkeeping of the macOS/FreeBSD path is exercised
// where CI runs.
func TestSendfileLoop(t *testing.T) {
	data := randomBytes(200_000)
	const pos, n = 1234, 150_000
	never := func(error) bool { return false }

	t.Run("partial sends with EAGAIN and EINTR", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		conn := &fakeRawConn{fd: 42}
		bsd := &bsdSendfile{chunk: 7000}
		written, handled, err := e.sendfileWith(conn, bsd.send, never)
		if err != nil || !handled || written != n {
			t.Fatalf("sent %d of %d, handled %v: %v", written, n, handled, err)
		}
		if !bytes.Equal(bsd.got.Bytes(), data[pos:pos+n]) {
			t.Fatal("sent bytes differ")
		}
		if bsd.out != 42 {
			t.Fatalf("sent to fd %d, want the conn's 42", bsd.out)
		}
		for i, off := range bsd.offs {
			if want := pos + int64(i)*7000; off != want {
				t.Fatalf("call %d at offset %d, want %d", i, off, want)
			}
		}
		if wantWaits := (len(bsd.offs) + 3) / 4; conn.waits != wantWaits && conn.waits != wantWaits-1 {
			t.Fatalf("%d waits for %d calls", conn.waits, len(bsd.offs))
		}
		if p := filePos(t, e); p != 0 {
			t.Fatalf("file position moved to %d", p)
		}
	})
	t.Run("EAGAIN on the last bytes completes", func(t *testing.T) {
		e := fileExtent(t, data, pos, 7000)
		conn := &fakeRawConn{}
		bsd := &bsdSendfile{chunk: 7000} // first call: everything plus EAGAIN
		written, handled, err := e.sendfileWith(conn, bsd.send, never)
		if err != nil || !handled || written != 7000 || conn.waits != 0 || bsd.calls != 1 {
			t.Fatalf("sent %d, handled %v, %d waits, %d calls: %v", written, handled, conn.waits, bsd.calls, err)
		}
	})
	t.Run("unsupported destination", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		refuse := func(int, int, int64, int) (int, error) { return 0, unix.ENOTSOCK }
		written, handled, err := e.sendfileWith(&fakeRawConn{}, refuse, func(err error) bool { return errors.Is(err, unix.ENOTSOCK) })
		if handled || written != 0 || err != nil {
			t.Fatalf("want a fallback; got %d, handled %v, %v", written, handled, err)
		}
	})
	t.Run("unsupported after a partial send is an error", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		calls := 0
		send := func(int, int, int64, int) (int, error) {
			if calls++; calls == 1 {
				return 100, nil
			}
			return 0, unix.ENOTSOCK
		}
		written, handled, err := e.sendfileWith(&fakeRawConn{}, send, func(err error) bool { return errors.Is(err, unix.ENOTSOCK) })
		if !handled || written != 100 || !errors.Is(err, unix.ENOTSOCK) {
			t.Fatalf("got %d, handled %v, %v", written, handled, err)
		}
	})
	t.Run("peer error", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		send := func(int, int, int64, int) (int, error) { return 0, unix.EPIPE }
		written, handled, err := e.sendfileWith(&fakeRawConn{}, send, never)
		if !handled || written != 0 || !errors.Is(err, unix.EPIPE) {
			t.Fatalf("got %d, handled %v, %v", written, handled, err)
		}
		if want := fmt.Sprintf("sendfile %s", e.seg.logPath); !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Fatalf("error %q lacks context %q", err, want)
		}
	})
	t.Run("source shorter than extent", func(t *testing.T) {
		e := fileExtent(t, data[:pos+500], pos, n)
		bsd := &bsdSendfile{chunk: 1 << 20}
		written, handled, err := e.sendfileWith(&fakeRawConn{}, bsd.send, never)
		if !handled || written != 500 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("got %d, handled %v, %v", written, handled, err)
		}
	})
}
