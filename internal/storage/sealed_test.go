package storage

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
)

func TestSealedListsAndVerifies(t *testing.T) {
	dir := t.TempDir()
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, SegmentBytes: 4 << 10, FlushInterval: -1})
	defer mustClose(t, p)
	appendN(t, p, 120, 1)
	sealed := p.Sealed()
	if len(sealed) < 2 {
		t.Fatalf("%d sealed segments, want several", len(sealed))
	}
	l := p.segs.Load().segs
	for i, s := range sealed {
		if s.Start != l[i].start || s.End != l[i+1].start || s.Bytes != l[i].sealedSize || s.Records != l[i].sealedN {
			t.Fatalf("sealed[%d] = %+v, segment %d..%d of %d bytes", i, s, l[i].start, l[i+1].start, l[i].sealedSize)
		}
		fi, err := os.Stat(s.LogPath)
		if err != nil || fi.Size() != s.Bytes {
			t.Fatalf("log %s: %v, size %d want %d", s.LogPath, err, fi.Size(), s.Bytes)
		}
		if damaged, err := p.VerifySegment(s.Start); err != nil || damaged {
			t.Fatalf("verify %d: %v %v", s.Start, damaged, err)
		}
	}
	if _, err := p.VerifySegment(sealed[0].Start + 1); !errors.Is(err, ErrNoSegment) {
		t.Fatalf("verify of no segment: %v", err)
	}
	active := l[len(l)-1].start
	if _, err := p.VerifySegment(active); !errors.Is(err, ErrNoSegment) {
		t.Fatalf("verify of the active segment: %v", err)
	}
}

func TestVerifySegmentQuarantines(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Format: fakeFormat{}, SegmentBytes: 4 << 10, FlushInterval: -1}
	p := mustOpen(t, dir, opts)
	appendN(t, p, 120, 2)
	s := p.Sealed()[0]
	mustClose(t, p)
	// Damage a record in the middle of the first sealed segment: Open
	// trusts the sealed index, so the damage is found by VerifySegment.
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(s.LogPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var found []Damage
	opts.DamageFound = func(d Damage) { found = append(found, d) }
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	damaged, err := p.VerifySegment(s.Start)
	if err != nil || !damaged || len(found) == 0 {
		t.Fatalf("verify of a damaged segment: damaged %v, err %v, reported %d", damaged, err, len(found))
	}
	if !p.Sealed()[0].Damaged {
		t.Fatal("Sealed does not mark the segment damaged")
	}
}

// testChunk is a Chunk over a file holding log bytes from base on.
type testChunk struct {
	f        *os.File
	base     int64
	released int
}

func (c *testChunk) File() *os.File { return c.f }
func (c *testChunk) Base() int64    { return c.base }
func (c *testChunk) Name() string   { return "chunk" }
func (c *testChunk) Release()       { c.released++ }

func TestChunkExtent(t *testing.T) {
	log := bytes.Repeat([]byte("0123456789abcdef"), 1024) // 16 KiB of "log"
	const base = 4096
	path := t.TempDir() + "/chunk"
	if err := os.WriteFile(path, log[base:], 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &testChunk{f: f, base: base}
	r := ReadResult{Extents: []Extent{ChunkExtent(c, base+100, 5000, 7, base+4000, 9, 12)}}
	e := &r.Extents[0]
	got, err := io.ReadAll(io.NewSectionReader(e, 0, e.Len))
	if err != nil || !bytes.Equal(got, log[base+100:base+5100]) {
		t.Fatalf("ReadAt: %v, bytes equal %v", err, bytes.Equal(got, log[base+100:base+5100]))
	}
	var buf bytes.Buffer
	if n, err := e.WriteTo(&buf); err != nil || n != e.Len || !bytes.Equal(buf.Bytes(), log[base+100:base+5100]) {
		t.Fatalf("WriteTo (copy): %d %v", n, err)
	}
	// A socket: the sendfile path, reading the chunk file at its offsets.
	a, b := tcpPair(t)
	done := make(chan []byte)
	go func() {
		got, _ := io.ReadAll(b)
		done <- got
	}()
	if n, err := e.WriteTo(a); err != nil || n != e.Len {
		t.Fatalf("WriteTo (socket): %d %v", n, err)
	}
	a.Close()
	if got := <-done; !bytes.Equal(got, log[base+100:base+5100]) {
		t.Fatalf("sendfile sent %d bytes that differ", len(got))
	}
	r.Release()
	if c.released != 1 {
		t.Fatalf("chunk released %d times, want 1", c.released)
	}
}

// tcpPair returns two connected loopback TCP connections.
func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-acc
	t.Cleanup(func() { a.Close(); b.Close() })
	return a.(*net.TCPConn), b.(*net.TCPConn)
}
