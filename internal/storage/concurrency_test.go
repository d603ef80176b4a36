package storage

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentAppendRead runs appenders, readers and retention at once
// (meant for -race). Readers check that whatever they see is a contiguous run
// of verified records within the committed end.
func TestConcurrentAppendRead(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 4096
		p := mustOpen(t, t.TempDir(), opts)
		const writers, perWriter, readers = 4, 100, 3
		var wg sync.WaitGroup
		var stop atomic.Bool
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					rec := makeRecord(2, 40+i%100, byte(w))
					if _, err := p.Append(rec, 2); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		var rwg sync.WaitGroup
		for range readers {
			rwg.Go(func() {
				var r ReadResult
				defer r.Release()
				buf := make([]byte, 0, 1<<16)
				for !stop.Load() {
					first, next := p.Bounds()
					if err := p.Read(&r, first, 50, 0); err != nil {
						t.Error(err)
						return
					}
					expect := uint64(0)
					for i, e := range r.Extents {
						if i > 0 && e.FirstOffset != expect {
							t.Errorf("extent %d starts at %d, want %d", i, e.FirstOffset, expect)
							return
						}
						if vis := p.visNext.Load(); e.EndOffset > vis {
							t.Errorf("extent %d ends at %d past committed end %d (bounds %d..%d)", i, e.EndOffset, vis, first, next)
							return
						}
						buf = buf[:e.Len]
						if _, err := e.ReadAt(buf, 0); err != nil {
							t.Error(err)
							return
						}
						recs, err := splitRecords(buf)
						if err != nil {
							t.Errorf("extent %d: %v", i, err)
							return
						}
						if info, _ := (fakeFormat{}).Verify(recs[0]); info.BaseOffset != e.FirstOffset {
							t.Errorf("first record %d, extent says %d", info.BaseOffset, e.FirstOffset)
							return
						}
						expect = e.EndOffset
					}
					if _, _, err := p.OffsetForTimestamp(0); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		rwg.Go(func() {
			for !stop.Load() {
				if _, err := p.Retain(Retention{MaxBytes: 16 << 10}); err != nil {
					t.Error(err)
					return
				}
				_ = p.Stats()
			}
		})
		wg.Wait()
		stop.Store(true)
		rwg.Wait()
		st := p.Stats()
		if st.NextOffset != writers*perWriter*2 {
			t.Fatalf("next offset %d, want %d", st.NextOffset, writers*perWriter*2)
		}
		got := readRecords(t, p, 0)
		if uint64(len(got))*2 != st.Messages {
			t.Fatalf("%d records for %d messages", len(got), st.Messages)
		}
		mustClose(t, p)
	})
}

// TestGroupCommit holds the sync lock while appenders queue up, then checks
// that all of them were satisfied by a single fdatasync round.
func TestGroupCommit(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, Fsync: true})
	defer mustClose(t, p)
	const n = 16
	p.syncMu.Lock()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := p.Append(makeRecord(1, 10, byte(i)), 1); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "appends to queue", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.appended == n
	})
	if got := p.visNext.Load(); got != 0 {
		t.Fatalf("records visible before sync: next %d", got)
	}
	seg := p.active
	p.syncMu.Unlock()
	wg.Wait()
	// All n appends waited for one sync that covered them all: the first
	// syncer captured every record, the others found durable >= their seq.
	if d := p.durable.Load(); d != n {
		t.Fatalf("durable %d, want %d", d, n)
	}
	if seg.flushedN != n {
		t.Fatalf("index entries written %d, want %d", seg.flushedN, n)
	}
	if r := p.syncRounds.Load(); r != 1 {
		t.Fatalf("%d sync rounds for %d queued appends, want 1", r, n)
	}
	if got := p.visNext.Load(); got != n {
		t.Fatalf("visible next %d, want %d", got, n)
	}
}

// TestBackgroundFlush checks the page-cache mode flusher: crossing the
// message threshold triggers a sync of everything appended.
func TestBackgroundFlush(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		records int
		count   uint32
		payload int
		flushes bool
	}{
		{"below thresholds", Options{FlushMessages: 100, FlushBytes: 1 << 20}, 5, 2, 10, false},
		{"message threshold", Options{FlushMessages: 10, FlushBytes: 1 << 20}, 5, 2, 10, true},
		{"byte threshold", Options{FlushMessages: 1000, FlushBytes: 500}, 4, 1, 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Format = fakeFormat{}
			o.FlushInterval = -1
			flushed := make(chan struct{}, 100)
			// The hook is set before any append, so the flusher sees it.
			p, err := Open(t.TempDir(), o)
			must(t, err)
			p.mu.Lock()
			p.afterFlush = func() { flushed <- struct{}{} }
			p.mu.Unlock()
			for i := range tc.records {
				if _, err := p.Append(makeRecord(tc.count, tc.payload, byte(i)), tc.count); err != nil {
					t.Fatal(err)
				}
			}
			if tc.flushes {
				// The flusher runs as soon as a threshold is crossed, which
				// may be before the last append: it makes durable at least
				// the record that crossed it.
				<-flushed
				if d := p.durable.Load(); d == 0 || d > uint64(tc.records) {
					t.Fatalf("durable %d after a threshold flush of %d records", d, tc.records)
				}
			} else if p.durable.Load() != 0 {
				t.Fatal("synced below thresholds")
			}
			mustClose(t, p)
			if p.durable.Load() != uint64(tc.records) {
				t.Fatal("close did not sync")
			}
		})
	}
}

// TestExtentWriteTo sends extents over loopback TCP (sendfile) and into a
// buffer (pread copy).
func TestExtentWriteTo(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, SegmentBytes: 3000})
	defer mustClose(t, p)
	recs := appendN(t, p, 40, 5)
	var want []byte
	for _, r := range recs {
		want = append(want, r.rec...)
	}
	var r ReadResult
	defer r.Release()
	must(t, p.Read(&r, 0, 1<<20, 0))
	if len(r.Extents) < 2 {
		t.Fatalf("want several extents, have %d", len(r.Extents))
	}

	t.Run("buffer", func(t *testing.T) {
		var b bytes.Buffer
		for _, e := range r.Extents {
			n, err := e.WriteTo(&b)
			if err != nil || n != e.Len {
				t.Fatalf("write %d of %d: %v", n, e.Len, err)
			}
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatal("bytes differ")
		}
	})
	t.Run("tcp sendfile", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		defer ln.Close()
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
		for _, e := range r.Extents {
			n, err := e.WriteTo(c)
			if err != nil || n != e.Len {
				t.Fatalf("sendfile %d of %d: %v", n, e.Len, err)
			}
		}
		c.Close()
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("received %d bytes, differ from %d sent", len(b), len(want))
		}
	})
	t.Run("read at bounds", func(t *testing.T) {
		e := r.Extents[0]
		buf := make([]byte, e.Len+10)
		n, err := e.ReadAt(buf, 0)
		if n != int(e.Len) || err != io.EOF {
			t.Fatalf("read past extent: %d, %v", n, err)
		}
		if _, err := e.ReadAt(buf, e.Len); err != io.EOF {
			t.Fatalf("read at end: %v", err)
		}
		if _, err := e.ReadAt(buf, -1); err == nil {
			t.Fatal("negative offset accepted")
		}
	})
}

// TestNoAllocs pins the steady-state allocation behaviour of append and
// read (style.md: hot-path allocations are regressions).
func TestNoAllocs(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, FlushMessages: 1 << 30, FlushBytes: 1 << 40, FlushInterval: -1})
	defer mustClose(t, p)
	rec := makeRecord(10, 1000, 1)
	appendN(t, p, 1000, 0) // warm up the index
	if a := testing.AllocsPerRun(500, func() {
		if _, err := p.Append(rec, 10); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("append allocates %v per record", a)
	}
	var r ReadResult
	must(t, p.Read(&r, 0, 100, 0))
	if a := testing.AllocsPerRun(500, func() {
		if err := p.Read(&r, 500, 100, 0); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("read allocates %v", a)
	}
	r.Release()
}
