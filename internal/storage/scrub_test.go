package storage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestScrubFindsAndRepairs flips a byte of a sealed record behind an open
// partition's back: Scrub finds and quarantines it, reads skip it, a
// reopen keeps it quarantined, RepairRecord refuses wrong bytes and lifts
// the quarantine with the right ones.
func TestScrubFindsAndRepairs(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500}
	dir, recs := buildLog(t, opts, 60)
	p := mustOpen(t, dir, opts)
	rep, err := p.Scrub(t.Context(), 0)
	if err != nil || len(rep.New) != 0 || len(rep.Damaged) != 0 || rep.Segments == 0 || rep.Records == 0 || rep.Bytes == 0 {
		t.Fatalf("clean scrub: %+v, %v", rep, err)
	}
	const k = 7
	log, pos := locateRecord(t, dir, recs[k])
	flipByte(t, log, pos+45)
	rep, err = p.Scrub(t.Context(), 0)
	if err != nil || len(rep.New) != 1 || len(rep.Damaged) != 1 {
		t.Fatalf("scrub: %+v, %v", rep, err)
	}
	checkDamage(t, p, recs, k)
	checkServed(t, p, without(recs, k))
	// A second pass finds nothing new.
	if rep, err = p.Scrub(t.Context(), 0); err != nil || len(rep.New) != 0 || len(rep.Damaged) != 1 {
		t.Fatalf("second scrub: %+v, %v", rep, err)
	}
	mustClose(t, p)

	p = mustOpen(t, dir, opts) // not VerifySealed: the quarantine file says it
	defer mustClose(t, p)
	checkDamage(t, p, recs, k)
	checkServed(t, p, without(recs, k))

	if err := p.RepairRecord(recs[k].base+1, recs[k].rec); !errors.Is(err, ErrNotDamaged) {
		t.Fatalf("repair of an undamaged offset: %v", err)
	}
	wrong := bytes.Clone(recs[k].rec)
	wrong[40] ^= 1
	if err := p.RepairRecord(recs[k].base, wrong); !errors.Is(err, ErrBadRepair) {
		t.Fatalf("repair with bytes that do not verify: %v", err)
	}
	other := stampedRecord(recs[k].base, recs[k].ts, recs[k].count, len(recs[k].rec)-fakeHeaderLen+1, 9)
	if err := p.RepairRecord(recs[k].base, other); !errors.Is(err, ErrBadRepair) {
		t.Fatalf("repair with a record of another length: %v", err)
	}
	shifted := stampedRecord(recs[k].base+1, recs[k].ts, recs[k].count, len(recs[k].rec)-fakeHeaderLen, 9)
	if err := p.RepairRecord(recs[k].base, shifted); !errors.Is(err, ErrBadRepair) {
		t.Fatalf("repair with a record of another offset: %v", err)
	}
	checkDamage(t, p, recs, k)
	if err := p.RepairRecord(recs[k].base, recs[k].rec); err != nil {
		t.Fatalf("repair: %v", err)
	}
	checkDamage(t, p, recs)
	checkServed(t, p, recs)
	m, _ := filepath.Glob(filepath.Join(dir, "*"+quarSuffix))
	if len(m) != 0 {
		t.Fatalf("quarantine files after repair: %v", m)
	}
}

// TestRepairActive repairs a record of the active segment.
func TestRepairActive(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	recs := appendN(t, p, 10, 4)
	mustClose(t, p)
	log, pos := locateRecord(t, dir, recs[4])
	flipByte(t, log, pos+35)
	p = mustOpen(t, dir, opts)
	checkDamage(t, p, recs, 4)
	must(t, p.RepairRecord(recs[4].base, recs[4].rec))
	checkServed(t, p, recs)
	mustClose(t, p)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs)
}

// TestScrubConcurrent runs Scrub passes beside appends, reads and
// retention (run with -race): every pass ends without error, finds no
// damage in an intact log, and finds a flip made meanwhile.
func TestScrubConcurrent(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 3000}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	appendN(t, p, 100, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	stop := make(chan struct{})
	wg.Go(func() { // appender
		for i := 0; i < 2000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.Append(makeRecord(2, 100, byte(i)), 2); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() { // reader
		var r ReadResult
		defer r.Release()
		for i := 0; i < 2000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			first, next := p.Bounds()
			if next == first {
				continue
			}
			if err := p.Read(&r, first+uint64(i)%(next-first), 50, 0); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() { // retention
		for i := 0; i < 200; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.Retain(Retention{MaxBytes: 30000}); err != nil {
				errs <- err
				return
			}
		}
	})
	for i := 0; i < 20; i++ {
		rep, err := p.Scrub(ctx, 0)
		if err != nil {
			t.Fatalf("scrub %d: %v", i, err)
		}
		if len(rep.Damaged) != 0 {
			t.Fatalf("scrub %d found damage in an intact log: %+v", i, rep.Damaged)
		}
		_ = p.Damaged()
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Now a flip in the oldest segment, found by a pass.
	segs := segmentLogs(t, dir)
	recs := recordsIn(t, segs[0])
	flipByte(t, segs[0], recs[len(recs)/2].pos+40)
	rep, err := p.Scrub(ctx, 0)
	if err != nil || len(rep.New) != 1 || rep.New[0].First != recs[len(recs)/2].off {
		t.Fatalf("scrub after flip: %+v, %v", rep, err)
	}
}

// TestScrubCancel checks that a rate-limited pass ends when its context
// does.
func TestScrubCancel(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500}
	dir, _ := buildLog(t, opts, 60)
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	// 60 records of about 250 bytes at 100 B/s take minutes.
	rep, err := p.Scrub(ctx, 100)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("scrub: %+v, %v; want the context's error", rep, err)
	}
}

// TestPacer drives the token bucket with a fake clock: it lets the rate
// through, and no more, on average.
func TestPacer(t *testing.T) {
	now := time.Unix(0, 0)
	var slept time.Duration
	pc := newPacer(1000, func() time.Time { return now }, func(_ context.Context, d time.Duration) error {
		slept += d
		now = now.Add(d)
		return nil
	})
	for range 100 {
		must(t, pc.wait(t.Context(), 100))
	}
	// 10,000 bytes at 1,000 B/s with a full bucket of 1,000: 9 s.
	if slept < 8900*time.Millisecond || slept > 9100*time.Millisecond {
		t.Fatalf("slept %v, want about 9s", slept)
	}
	// A request larger than the bucket is let through once it is full.
	slept = 0
	must(t, pc.wait(t.Context(), 5000))
	must(t, pc.wait(t.Context(), 1))
	if slept < 4*time.Second {
		t.Fatalf("slept %v after a large request, want the debt paid", slept)
	}
	unlimited := newPacer(0, time.Now, sleepCtx)
	must(t, unlimited.wait(t.Context(), 1<<40))
}

// TestScrubRemovedSegment checks that damage found in a segment retention
// removed meanwhile leaves no quarantine file behind.
func TestScrubRemovedSegment(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500}
	dir, _ := buildLog(t, opts, 60)
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	seg := p.segs.Load().segs[0]
	seg.acquire()
	defer seg.release()
	if _, err := p.DeleteOldestSegments(1); err != nil {
		t.Fatal(err)
	}
	added, err := p.addDamage(seg, []Damage{{Path: seg.logPath, Pos: 0, Len: 10, First: 0, Last: 0, Reason: "test"}})
	if err != nil || len(added) != 0 {
		t.Fatalf("added %v, %v", added, err)
	}
	if _, err := os.Stat(seg.quarPath()); !os.IsNotExist(err) {
		t.Fatalf("quarantine file of a removed segment: %v", err)
	}
}
