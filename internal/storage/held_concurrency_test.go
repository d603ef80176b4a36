package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// committedLog is what the writer of TestHeldConcurrent has revealed: the
// bytes of every record by base offset, recorded before Reveal covers it.
// A revealed record is never cut, so an entry never changes.
type committedLog struct {
	mu   sync.Mutex
	recs map[uint64][]byte
}

func (c *committedLog) add(r appended) {
	c.mu.Lock()
	c.recs[r.base] = r.rec
	c.mu.Unlock()
}

func (c *committedLog) get(base uint64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.recs[base]
	return b, ok
}

// TestHeldConcurrent runs one raft-like writer (appends, partial reveals,
// cuts of the unrevealed suffix, also into sealed segments, retention) against pollers and ReadRecord
// callers (meant for -race). A poller must only ever see revealed records,
// byte for byte as revealed, ending at or before the revealed end it
// observes afterwards; ReadRecord must return whole, verified records at
// exactly the asked offset.
func TestHeldConcurrent(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 1024
		opts.FlushMessages = 1
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		c := &committedLog{recs: map[uint64][]byte{}}
		var stop atomic.Bool
		var polled, fetched atomic.Int64
		var wg sync.WaitGroup

		for range 2 {
			wg.Go(func() {
				var r ReadResult
				defer r.Release()
				buf := make([]byte, 0, 1<<16)
				for !stop.Load() {
					first, _ := p.Bounds()
					if err := p.Read(&r, first, 200, 0); err != nil {
						t.Error(err)
						return
					}
					var end uint64
					for _, e := range r.Extents {
						buf = buf[:e.Len]
						if _, err := e.ReadAt(buf, 0); err != nil {
							t.Error(err)
							return
						}
						recs, err := splitRecords(buf)
						if err != nil {
							t.Errorf("extent at %d: %v", e.FirstOffset, err)
							return
						}
						for _, rec := range recs {
							info, _ := fakeFormat{}.Verify(rec)
							want, ok := c.get(info.BaseOffset)
							if !ok || !bytes.Equal(want, rec) {
								t.Errorf("polled record %d was never revealed (known %v)", info.BaseOffset, ok)
								return
							}
							end = info.BaseOffset + uint64(info.Count)
							polled.Add(1)
						}
					}
					r.Release()
					if mark := visibleEnd(p); end > mark {
						t.Errorf("polled up to %d, revealed end afterwards %d", end, mark)
						return
					}
				}
			})
		}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(1, 2))
			buf := make([]byte, 0, 1<<12)
			for !stop.Load() {
				first, _ := p.Bounds()
				tail, _ := p.Tail()
				if tail <= first {
					continue
				}
				off := first + rng.Uint64N(tail-first)
				// Known as revealed before the read: it cannot change.
				want, revealed := c.get(off)
				got, count, err := p.ReadRecord(buf[:0], off)
				if errors.Is(err, ErrNoRecord) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				info, verr := fakeFormat{}.Verify(got)
				if verr != nil || info.BaseOffset != off || info.Count != count {
					t.Errorf("read record %d: got base %d count %d/%d (%v)", off, info.BaseOffset, info.Count, count, verr)
					return
				}
				if revealed && !bytes.Equal(want, got) {
					t.Errorf("read record %d differs from the revealed one", off)
					return
				}
				fetched.Add(1)
			}
		})

		rng := rand.New(rand.NewPCG(3, 4))
		var pending []appended
		var cuts, crossCuts, reveals int
		for iter := range 300 {
			pending = append(pending, appendHeld(t, p, 1+rng.IntN(3), iter)...)
			switch rng.IntN(3) {
			case 0: // a new leader replaces part of the unrevealed suffix
				j := rng.IntN(len(pending))
				segs := p.segs.Load().segs
				if pending[j].base < segs[len(segs)-1].start {
					crossCuts++ // into a sealed segment
				}
				if err := p.TruncateFrom(pending[j].base); err != nil {
					t.Fatalf("truncate from %d: %v", pending[j].base, err)
				}
				pending = pending[:j]
				cuts++
			case 1: // commit a prefix, maybe up to the middle of a record
				j := rng.IntN(len(pending) + 1)
				x := pending[0].base
				if j > 0 {
					x = endOf(pending[:j])
				}
				if j < len(pending) && rng.IntN(2) == 0 {
					x += rng.Uint64N(uint64(pending[j].count))
				}
				for _, r := range pending[:j] {
					c.add(r)
				}
				p.Reveal(x)
				pending = pending[j:]
				reveals++
			}
			if iter%60 == 59 {
				if _, err := p.DeleteOldestSegments(1); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, r := range pending {
			c.add(r)
		}
		p.Reveal(^uint64(0))
		// Let the readers see the final state at least once.
		start := polled.Load()
		waitFor(t, "a poll after the last reveal", func() bool { return polled.Load() > start+1 })
		stop.Store(true)
		wg.Wait()
		if cuts == 0 || crossCuts == 0 || reveals == 0 || fetched.Load() == 0 || len(sealedSegmentsOf(p)) == 0 {
			t.Fatalf("too little happened: %d cuts (%d into sealed segments), %d reveals, %d records fetched, %d sealed",
				cuts, crossCuts, reveals, fetched.Load(), len(sealedSegmentsOf(p)))
		}
		t.Logf("%d cuts (%d into sealed segments), %d reveals, %d records polled, %d fetched", cuts, crossCuts, reveals, polled.Load(), fetched.Load())
	})
}
