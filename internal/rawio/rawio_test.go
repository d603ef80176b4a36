package rawio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestWriteAt(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	small, large := pattern(100, 1), pattern(3*(64<<10)+17, 2)
	if n, err := WriteAt(f, small, 5); n != len(small) || err != nil {
		t.Fatalf("small write: %d, %v", n, err)
	}
	if n, err := WriteAt(f, large, 105); n != len(large) || err != nil {
		t.Fatalf("large write: %d, %v", n, err)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(make([]byte, 5), small...), large...)
	if !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes, not the %d written", len(got), len(want))
	}
}

func TestWriteAtClosedFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := WriteAt(f, pattern((64<<10), 3), 0); err == nil {
		t.Fatal("a write to a closed file succeeded")
	}
}

func TestWriteAtReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = WriteAt(f, pattern((64<<10), 4), 0)
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != path {
		t.Fatalf("write to a read-only file: %v, want a PathError naming %s", err, path)
	}
}

// pair returns both ends of a loopback TCP connection.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-done
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestConnRoundTrip sends more than the socket buffers hold, in more
// vectors than one writev takes, and reads it back in large reads: both
// sides must wait for the poller in between.
func TestConnRoundTrip(t *testing.T) {
	a, b := pair(t)
	var v net.Buffers
	var want []byte
	for i := range 3000 {
		p := pattern(1+i%4000, uint64(i))
		if i%500 == 0 {
			p = pattern(2<<20, uint64(i))
		}
		v = append(v, p)
		want = append(want, p...)
	}
	errc := make(chan error, 1)
	go func() {
		n, err := NewConn(a).WriteBuffers(v)
		if err == nil && n != int64(len(want)) {
			err = io.ErrShortWrite
		}
		a.Close()
		errc <- err
	}()
	got, err := io.ReadAll(NewConn(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written, or other bytes", len(got), len(want))
	}
}

func TestConnReadDeadline(t *testing.T) {
	_, b := pair(t)
	b.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := NewConn(b).Read(make([]byte, (64 << 10)))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
}

func TestConnWriteDeadline(t *testing.T) {
	a, _ := pair(t) // nobody reads: the buffers fill
	a.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := NewConn(a).WriteBuffers(net.Buffers{make([]byte, 64<<20)})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past its deadline: %v, want a timeout", err)
	}
}

func TestConnClosed(t *testing.T) {
	a, b := pair(t)
	x := NewConn(b)
	b.Close()
	if _, err := x.Read(make([]byte, (64 << 10))); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v", err)
	}
	a.Close()
}

func TestConnPeerReset(t *testing.T) {
	a, b := pair(t)
	a.(*net.TCPConn).SetLinger(0)
	a.Close() // RST
	time.Sleep(20 * time.Millisecond)
	x := NewConn(b)
	var err error
	for range 10 {
		if _, err = x.WriteBuffers(net.Buffers{make([]byte, (64 << 10))}); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("writes to a reset connection all succeeded")
	}
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("write error %v is not a net.OpError", err)
	}
}
