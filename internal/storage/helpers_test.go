package storage

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for retention and timestamp tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMicro(1_700_000_000_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// permutation is one combination of the options every storage test runs
// under (like nats-server's testFileStoreAllPermutations).
type permutation struct {
	name  string
	fsync bool
	pre   bool
}

var permutations = []permutation{
	{"pagecache", false, false},
	{"pagecache-prealloc", false, true},
	{"fsync", true, false},
	{"fsync-prealloc", true, true},
}

// allPermutations runs fn once per option combination.
func allPermutations(t *testing.T, fn func(t *testing.T, opts Options)) {
	t.Helper()
	for _, pm := range permutations {
		t.Run(pm.name, func(t *testing.T) {
			fn(t, Options{Format: fakeFormat{}, Fsync: pm.fsync, Preallocate: pm.pre, FlushInterval: -1})
		})
	}
}

func mustOpen(t testing.TB, dir string, opts Options) *Partition {
	t.Helper()
	p, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return p
}

func mustClose(t testing.TB, p *Partition) {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// appended is what a test remembers about one appended record.
type appended struct {
	base  uint64
	count uint32
	ts    uint64
	rec   []byte // stamped bytes
}

func appendN(t testing.TB, p *Partition, n int, seed int) []appended {
	t.Helper()
	var out []appended
	for i := range n {
		count := uint32(1 + (seed+i)%5)
		rec := makeRecord(count, 50+(seed+i)%300, byte(seed+i))
		res, err := p.Append(rec, count)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, appended{base: res.BaseOffset, count: count, ts: res.Timestamp, rec: rec})
	}
	return out
}

// readRecords reads every committed record from offset from on, splitting
// the extents into records with the fake format and verifying each.
func readRecords(t testing.TB, p *Partition, from uint64) [][]byte {
	t.Helper()
	var r ReadResult
	defer r.Release()
	if err := p.Read(&r, from, ^uint64(0), 0); err != nil {
		t.Fatalf("read: %v", err)
	}
	var out [][]byte
	next := uint64(0)
	for i, e := range r.Extents {
		buf := make([]byte, e.Len)
		if _, err := e.ReadAt(buf, 0); err != nil {
			t.Fatalf("extent %d: %v", i, err)
		}
		recs, err := splitRecords(buf)
		if err != nil {
			t.Fatalf("extent %d: %v", i, err)
		}
		for j, rec := range recs {
			info, _ := fakeFormat{}.Verify(rec)
			if (i > 0 || j > 0) && info.BaseOffset != next {
				t.Fatalf("record at offset %d, want %d", info.BaseOffset, next)
			}
			next = info.BaseOffset + uint64(info.Count)
		}
		if len(recs) > 0 {
			first, _ := fakeFormat{}.Verify(recs[0])
			last, _ := fakeFormat{}.Verify(recs[len(recs)-1])
			if first.BaseOffset != e.FirstOffset || last.BaseOffset != e.LastOffset || last.BaseOffset+uint64(last.Count) != e.EndOffset {
				t.Fatalf("extent %d offsets %d/%d/%d disagree with records %d/%d", i, e.FirstOffset, e.LastOffset, e.EndOffset, first.BaseOffset, last.BaseOffset)
			}
			if e.LastPos-e.Pos != e.Len-int64(len(recs[len(recs)-1])) {
				t.Fatalf("extent %d LastPos %d wrong", i, e.LastPos)
			}
		}
		out = append(out, recs...)
	}
	return out
}

// splitRecords cuts b into verified fake records.
func splitRecords(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < fakeHeaderLen {
			return nil, fmt.Errorf("short record header (%d bytes)", len(b))
		}
		n, err := fakeFormat{}.RecordLen(b[:fakeHeaderLen])
		if err != nil || n > int64(len(b)) {
			return nil, fmt.Errorf("bad record length %d: %v", n, err)
		}
		if _, err := (fakeFormat{}).Verify(b[:n]); err != nil {
			return nil, err
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out, nil
}

// checkSame asserts that the partition holds exactly want, byte for byte.
func checkSame(t testing.TB, p *Partition, want []appended) {
	t.Helper()
	got := readRecords(t, p, 0)
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i].rec) {
			t.Fatalf("record %d differs", i)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// fastTempDir returns a temporary directory on tmpfs when the machine has
// one (/dev/shm): fsync is free there, which fuzz targets need to run many
// executions per second. Otherwise it is t.TempDir().
func fastTempDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "storage-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}
