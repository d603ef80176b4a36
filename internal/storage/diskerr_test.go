package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// diskWatch records a partition's disk events and counted errors.
type diskWatch struct {
	mu      sync.Mutex
	reports []DiskReport
	kinds   map[string]int
}

func (w *diskWatch) onDisk(r DiskReport) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reports = append(w.reports, r)
}

func (w *diskWatch) StorageWrite(time.Duration, int) {}
func (w *diskWatch) StorageSync(time.Duration)       {}
func (w *diskWatch) StorageWriteError(kind string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kinds == nil {
		w.kinds = map[string]int{}
	}
	w.kinds[kind]++
}

func (w *diskWatch) events() []DiskEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []DiskEvent
	for _, r := range w.reports {
		if !r.Repeat {
			out = append(out, r.Event)
		}
	}
	return out
}

func (w *diskWatch) count(kind string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.kinds[kind]
}

// faulty returns opts writing through a fault injector and reporting to
// a diskWatch.
func faulty(opts Options) (Options, *fileio.Faults, *diskWatch) {
	f := &fileio.Faults{Base: osIO{}}
	w := &diskWatch{}
	opts.FileIO, opts.OnDisk, opts.Observer = f, w.onDisk, w
	return opts, f, w
}

func sameEvents(got []DiskEvent, want ...DiskEvent) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestSyncErrorStopsFsyncLog: with enforce_fsync, a failed fdatasync (EIO,
// and ENOSPC too: a failed sync is never "disk full") fails the append
// that waited for it, the record is never visible, later appends, Flush
// and Close get the same stop error, and the sync is not retried.
func TestSyncErrorStopsFsyncLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		kind string
	}{
		{"eio", syscall.EIO, "eio"},
		{"enospc", syscall.ENOSPC, "enospc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, faults, watch := faulty(Options{Format: fakeFormat{}, Fsync: true, FlushInterval: -1})
			p := mustOpen(t, t.TempDir(), opts)
			want := appendN(t, p, 3, 1)
			faults.Add(fileio.Rule{Ops: fileio.OpSync, Name: "*.log", Err: tc.err})
			_, err := p.Append(makeRecord(2, 40, 9), 2)
			if !errors.Is(err, ErrStopped) || !errors.Is(err, tc.err) {
				t.Fatalf("append with a failing sync: %v, want ErrStopped wrapping %v", err, tc.err)
			}
			checkSame(t, p, want) // the unsynced record is not served
			if _, err := p.Append(makeRecord(1, 40, 10), 1); !errors.Is(err, ErrStopped) {
				t.Fatalf("append after the stop: %v", err)
			}
			if err := p.Flush(); !errors.Is(err, ErrStopped) {
				t.Fatalf("flush after the stop: %v", err)
			}
			faults.Clear() // the disk "works" again: still no retry
			if _, err := p.Append(makeRecord(1, 40, 11), 1); !errors.Is(err, ErrStopped) {
				t.Fatalf("append after the disk came back: %v", err)
			}
			if err := p.Close(); !errors.Is(err, ErrStopped) {
				t.Fatalf("close after the stop: %v", err)
			}
			if n := faults.Injected(); n != 1 {
				t.Fatalf("%d failed calls, want exactly 1 (a failed sync is never retried)", n)
			}
			if ev := watch.events(); !sameEvents(ev, DiskStopped) {
				t.Fatalf("events %v, want one DiskStopped", ev)
			}
			if n := watch.count(tc.kind); n != 1 {
				t.Fatalf("counted %d %s errors, want 1", n, tc.kind)
			}
		})
	}
}

// TestSyncErrorFailsEveryWaiter: concurrent enforce_fsync appenders that
// share a failing sync all get an error; none is acknowledged and nothing
// becomes visible.
func TestSyncErrorFailsEveryWaiter(t *testing.T) {
	opts, faults, _ := faulty(Options{Format: fakeFormat{}, Fsync: true, FlushInterval: -1})
	faults.Add(fileio.Rule{Ops: fileio.OpSync, Err: syscall.EIO})
	p := mustOpen(t, t.TempDir(), opts)
	const n = 16
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := p.Append(makeRecord(1, 30, byte(i)), 1)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("an appender got %v, want ErrStopped", err)
		}
	}
	if got := readRecords(t, p, 0); len(got) != 0 {
		t.Fatalf("%d records visible after a failed sync", len(got))
	}
	if first, next := p.Bounds(); first != next {
		t.Fatalf("bounds %d..%d after a failed sync, want empty", first, next)
	}
	_ = p.Close()
}

// TestFlusherSyncErrorStops: without enforce_fsync, a failed background
// flush stops the log: it is reported once, the log no longer reaches
// durability (Flush fails), later appends are refused, the sync is not
// retried; what was written stays readable.
func TestFlusherSyncErrorStops(t *testing.T) {
	opts, faults, watch := faulty(Options{Format: fakeFormat{}, FlushMessages: 1, FlushInterval: -1})
	faults.Add(fileio.Rule{Ops: fileio.OpSync, Err: syscall.EIO})
	p := mustOpen(t, t.TempDir(), opts)
	want := appendN(t, p, 1, 1) // page-cache mode acknowledges at once
	waitFor(t, "the background flush to fail", func() bool { return len(watch.events()) > 0 })
	if ev := watch.events(); !sameEvents(ev, DiskStopped) {
		t.Fatalf("events %v, want one DiskStopped", ev)
	}
	if _, err := p.Append(makeRecord(1, 30, 2), 1); !errors.Is(err, ErrStopped) {
		t.Fatalf("append after a failed flush: %v", err)
	}
	if err := p.Flush(); !errors.Is(err, ErrStopped) {
		t.Fatalf("flush after a failed flush: %v", err)
	}
	if p.durable.Load() != 0 {
		t.Fatalf("the log claims %d durable records", p.durable.Load())
	}
	checkSame(t, p, want)
	if err := p.Close(); !errors.Is(err, ErrStopped) {
		t.Fatalf("close: %v", err)
	}
	if n := faults.Injected(); n != 1 {
		t.Fatalf("%d failed syncs, want 1 (no retry)", n)
	}
	if n := watch.count("eio"); n != 1 {
		t.Fatalf("counted %d eio errors, want 1", n)
	}
}

// TestWriteEIOStops: a write that fails with EIO stops the log.
func TestWriteEIOStops(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		opts, faults, watch := faulty(opts)
		p := mustOpen(t, t.TempDir(), opts)
		want := appendN(t, p, 2, 3)
		faults.Add(fileio.Rule{Ops: fileio.OpWrite, Name: "*.log", Times: 1, Err: syscall.EIO, Partial: 7})
		if _, err := p.Append(makeRecord(1, 30, 2), 1); !errors.Is(err, ErrStopped) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("append with EIO: %v", err)
		}
		if _, err := p.Append(makeRecord(1, 30, 2), 1); !errors.Is(err, ErrStopped) {
			t.Fatalf("append after EIO: %v", err)
		}
		checkSame(t, p, want)
		if ev := watch.events(); !sameEvents(ev, DiskStopped) {
			t.Fatalf("events %v", ev)
		}
		_ = p.Close()
	})
}

// TestDiskFullMidRecord: a record cut short by ENOSPC is cut back to the
// last whole record, the append fails with ErrDiskFull naming the
// directory, the partition stays open (polls served), refuses while the
// disk is full and resumes with the next append that fits; offsets stay
// dense and the log reopens intact.
func TestDiskFullMidRecord(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		opts, faults, watch := faulty(opts)
		dir := t.TempDir()
		p := mustOpen(t, dir, opts)
		want := appendN(t, p, 5, 7)
		logPath := filepath.Join(dir, segmentStem(0)+logSuffix)
		size := func() int64 {
			fi, err := os.Stat(logPath)
			if err != nil {
				t.Fatal(err)
			}
			return fi.Size()
		}
		whole := size()
		faults.Add(fileio.Rule{Ops: fileio.OpWrite, Name: "*.log", Times: 3, Err: syscall.ENOSPC, Partial: 25})
		for i := range 3 {
			_, err := p.Append(makeRecord(3, 200, byte(i)), 3)
			if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append %d on a full disk: %v", i, err)
			}
			if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "full") {
				t.Fatalf("error does not name the directory and the full disk: %v", err)
			}
			if got := size(); got != whole {
				t.Fatalf("log is %d bytes after a refused append, want %d (cut back)", got, whole)
			}
			checkSame(t, p, want) // polls are served
		}
		want = append(want, appendN(t, p, 2, 11)...)
		if want[5].base != want[4].base+uint64(want[4].count) {
			t.Fatalf("offset %d after a refused append, want %d", want[5].base, want[4].base+uint64(want[4].count))
		}
		checkSame(t, p, want)
		if ev := watch.events(); !sameEvents(ev, DiskFull, DiskSpaceBack) {
			t.Fatalf("events %v, want DiskFull then DiskSpaceBack", ev)
		}
		if n := watch.count("enospc"); n != 3 {
			t.Fatalf("counted %d enospc errors, want 3", n)
		}
		mustClose(t, p)
		p = mustOpen(t, dir, Options{Format: fakeFormat{}, Fsync: opts.Fsync})
		defer mustClose(t, p)
		checkSame(t, p, want)
	})
}

// TestDiskFullIndexDeferred: a full disk when the active index is
// written during a flush does not fail the flush: the log is synced
// (recovery rebuilds that index), the entries are written later.
func TestDiskFullIndexDeferred(t *testing.T) {
	opts, faults, watch := faulty(Options{Format: fakeFormat{}, FlushInterval: -1})
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	want := appendN(t, p, 4, 1)
	faults.Add(fileio.Rule{Ops: fileio.OpWrite, Name: "*.index", Times: 1, Err: syscall.ENOSPC})
	if err := p.Flush(); err != nil {
		t.Fatalf("flush with a full disk for the index: %v", err)
	}
	if faults.Injected() != 1 || p.durable.Load() != 4 {
		t.Fatalf("injected %d, durable %d", faults.Injected(), p.durable.Load())
	}
	want = append(want, appendN(t, p, 2, 5)...)
	mustClose(t, p)
	if ev := watch.events(); len(ev) != 0 {
		t.Fatalf("events %v for a deferred index write", ev)
	}
	p = mustOpen(t, dir, Options{Format: fakeFormat{}})
	defer mustClose(t, p)
	checkSame(t, p, want)
}

// TestDiskFullAtRoll: a segment roll that finds the disk full does not
// fail the append whose record was written; the next append retries the
// roll and is refused while the disk is full, then the log goes on in a
// new segment.
func TestDiskFullAtRoll(t *testing.T) {
	opts, faults, watch := faulty(Options{Format: fakeFormat{}, SegmentBytes: 1000, FlushInterval: -1, FlushMessages: 1 << 20, FlushBytes: 1 << 30})
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	faults.Add(fileio.Rule{Ops: fileio.OpWrite, Name: "*.index", Times: 2, Err: syscall.ENOSPC})
	var want []appended
	for p.Stats().Bytes < 1000 {
		want = append(want, appendN(t, p, 1, len(want))...)
	}
	if _, err := p.Append(makeRecord(1, 30, 1), 1); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("append retrying the roll on a full disk: %v", err)
	}
	want = append(want, appendN(t, p, 1, 99)...)
	if s := p.Stats().Segments; s != 2 {
		t.Fatalf("%d segments, want 2", s)
	}
	checkSame(t, p, want)
	if ev := watch.events(); !sameEvents(ev, DiskFull, DiskSpaceBack) {
		t.Fatalf("events %v", ev)
	}
	mustClose(t, p)
	p = mustOpen(t, dir, Options{Format: fakeFormat{}, SegmentBytes: 1000})
	defer mustClose(t, p)
	checkSame(t, p, want)
}
