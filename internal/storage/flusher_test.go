package storage

import (
	"runtime"
	"testing"
	"time"
)

// TestIdlePartitionsCostNothing: open partitions in page-cache mode that
// receive nothing have no goroutine and no armed timer, and one that
// was written and synced disarms its timer again.
func TestIdlePartitionsCostNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	var ps []*Partition
	for range 50 {
		ps = append(ps, mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, FlushInterval: 20 * time.Millisecond}))
	}
	defer func() {
		for _, p := range ps {
			mustClose(t, p)
		}
	}()
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("%d goroutines for 50 idle partitions (%d before)", n, before)
	}
	p := ps[0]
	if _, err := p.Append(makeRecord(1, 10, 1), 1); err != nil {
		t.Fatal(err)
	}
	// Below both thresholds only the interval timer can sync it.
	waitFor(t, "the interval flush", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.durable.Load() == 1 && !p.timerArmed && !p.flushing
	})
}

// TestFlushIntervalBound: data below both thresholds is synced by the
// interval timer, once per burst, and not before the interval.
func TestFlushIntervalBound(t *testing.T) {
	const interval = 150 * time.Millisecond
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, FlushMessages: 1000, FlushBytes: 1 << 20, FlushInterval: interval})
	defer mustClose(t, p)
	start := time.Now()
	for i := range 3 {
		if _, err := p.Append(makeRecord(1, 10, byte(i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	burst := time.Since(start)
	waitFor(t, "the interval flush", func() bool { return p.durable.Load() == 3 })
	if el := time.Since(start); el < interval {
		t.Fatalf("synced after %v, before the %v interval", el, interval)
	}
	if r := p.syncRounds.Load(); r != 1 && burst < interval {
		t.Fatalf("%d sync rounds for one burst, want 1", r)
	}
}

// TestThresholdFlushRepeats: appends that keep crossing the threshold
// while a flush runs are synced by the same flush goroutine, which then
// exits; everything appended ends durable without Close.
func TestThresholdFlushRepeats(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, FlushMessages: 4, FlushBytes: 1 << 30, FlushInterval: -1})
	defer mustClose(t, p)
	for i := range 200 {
		if _, err := p.Append(makeRecord(2, 10, byte(i)), 2); err != nil {
			t.Fatal(err)
		}
	}
	// 400 messages: the last append crossed the threshold (every second
	// append does), so a flush covers it.
	waitFor(t, "the threshold flushes", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.durable.Load() == 200 && !p.flushing
	})
}
