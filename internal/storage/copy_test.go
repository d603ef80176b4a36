package storage

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// fileExtent writes data to a fresh segment log and returns the extent
// [pos, pos+n) of it, for tests of the send paths without a partition.
func fileExtent(t *testing.T, data []byte, pos, n int64) *Extent {
	t.Helper()
	path := filepath.Join(t.TempDir(), segmentStem(0)+logSuffix)
	must(t, os.WriteFile(path, data, 0o644))
	f, err := openFile(path, os.O_RDWR, 0)
	must(t, err)
	t.Cleanup(func() { f.Close() })
	return &Extent{seg: &segment{logPath: path, log: f, logFd: int(f.Fd())}, Pos: pos, Len: n}
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// receiveAll accepts one loopback TCP connection and delivers everything
// read from it; the returned conn is the sending side.
func receiveAll(t *testing.T) (net.Conn, <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c, got
}

// filePos returns the shared file position of the extent's log.
func filePos(t *testing.T, e *Extent) int64 {
	t.Helper()
	pos, err := e.seg.log.Seek(0, io.SeekCurrent)
	must(t, err)
	return pos
}

// failAfter accepts n bytes, then fails.
type failAfter struct {
	n   int
	got bytes.Buffer
}

var errWriterFull = errors.New("writer full")

func (w *failAfter) Write(p []byte) (int, error) {
	if room := w.n - w.got.Len(); len(p) > room {
		w.got.Write(p[:room])
		return room, errWriterFull
	}
	return w.got.Write(p)
}

// TestCopyTo drives the portable pread copy directly, the path WriteTo
// takes on every OS without sendfile (and on Linux for plain writers).
func TestCopyTo(t *testing.T) {
	data := randomBytes(1 << 20) // several pooled buffers' worth
	const pos, n = 777, 600_000
	want := data[pos : pos+n]

	t.Run("buffer", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		var b bytes.Buffer
		written, err := e.copyTo(&b)
		if err != nil || written != n || !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("copied %d of %d (%v), bytes equal %v", written, n, err, bytes.Equal(b.Bytes(), want))
		}
		if p := filePos(t, e); p != 0 {
			t.Fatalf("file position moved to %d", p)
		}
	})
	t.Run("socket", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		c, got := receiveAll(t)
		written, err := e.copyTo(c)
		if err != nil || written != n {
			t.Fatalf("copied %d of %d: %v", written, n, err)
		}
		c.Close()
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("received %d bytes, differ from the %d sent", len(b), n)
		}
	})
	t.Run("writer error", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		w := &failAfter{n: 300_000}
		written, err := e.copyTo(w)
		if !errors.Is(err, errWriterFull) || written != 300_000 || !bytes.Equal(w.got.Bytes(), want[:300_000]) {
			t.Fatalf("copied %d (%v), want 300000 and the writer's error", written, err)
		}
	})
	t.Run("file shorter than extent", func(t *testing.T) {
		e := fileExtent(t, data[:pos+1000], pos, n)
		var b bytes.Buffer
		written, err := e.copyTo(&b)
		if !errors.Is(err, io.EOF) || written != 1000 || !bytes.Equal(b.Bytes(), want[:1000]) {
			t.Fatalf("copied %d (%v), want 1000 and EOF", written, err)
		}
	})
	t.Run("no allocations", func(t *testing.T) {
		e := fileExtent(t, data, pos, n)
		e.copyTo(io.Discard) // fill the buffer pool
		if a := testing.AllocsPerRun(50, func() {
			if _, err := e.copyTo(io.Discard); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("copyTo allocates %v per call", a)
		}
	})
}

// TestWriteToPlainWriter checks that WriteTo falls back to the copy for a
// writer without syscall.Conn.
func TestWriteToPlainWriter(t *testing.T) {
	data := randomBytes(100_000)
	e := fileExtent(t, data, 10, 90_000)
	var b bytes.Buffer
	if n, err := e.WriteTo(&b); err != nil || n != 90_000 || !bytes.Equal(b.Bytes(), data[10:90_010]) {
		t.Fatalf("wrote %d (%v)", n, err)
	}
}

// TestWriteToSocket sends through WriteTo (sendfile where the OS has it,
// the copy elsewhere): the bytes arrive intact and the shared file
// position is never used.
func TestWriteToSocket(t *testing.T) {
	data := randomBytes(3 << 20)
	e := fileExtent(t, data, 4321, 3<<20-5000)
	c, got := receiveAll(t)
	n, err := e.WriteTo(c)
	if err != nil || n != e.Len {
		t.Fatalf("wrote %d of %d: %v", n, e.Len, err)
	}
	c.Close()
	if b := <-got; !bytes.Equal(b, data[e.Pos:e.Pos+e.Len]) {
		t.Fatalf("received %d bytes, differ from the %d sent", len(b), e.Len)
	}
	if p := filePos(t, e); p != 0 {
		t.Fatalf("file position moved to %d", p)
	}
}
