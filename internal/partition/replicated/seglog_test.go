package replicated

import (
	"bytes"
	"errors"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/raftlog"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// stampedSend is a send entry whose batch is stamped at base, as the
// leader's Prepare hook leaves it.
func stampedSend(t *testing.T, base uint64, n int) []byte {
	t.Helper()
	rec := testutil.Batch(t, n)
	v, _, err := wire.ParseBatch(rec)
	if err != nil {
		t.Fatal(err)
	}
	v.Stamp(0, base, 100+base)
	e := entry{kind: entrySend, count: uint32(n), base: base, ts: 100 + base, rec: rec}
	return e.encode()
}

// segFixture is a held partition and a segLog over a durable raft log in
// one directory, reopened at will.
type segFixture struct {
	t        *testing.T
	dir      string
	part     *storage.Partition
	inner    *raftlog.Log
	seg      *segLog
	purgedAt uint64
}

func newSegFixture(t *testing.T) *segFixture {
	f := &segFixture{t: t, dir: t.TempDir()}
	f.open()
	t.Cleanup(f.close)
	return f
}

func (f *segFixture) open() {
	f.t.Helper()
	var err error
	if f.part, err = storage.Open(f.dir+"/part", storage.Options{Format: commit.BatchFormat{}, Held: true}); err != nil {
		f.t.Fatal(err)
	}
	if f.inner, err = raftlog.Open(f.dir+"/raft", raftlog.Options{}); err != nil {
		f.t.Fatal(err)
	}
	f.seg, err = openSegLog(f.inner, f.part, f.purgedAt)
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *segFixture) close() {
	if f.part != nil {
		_ = f.part.Close()
		_ = f.inner.Close()
		f.part = nil
	}
}

func (f *segFixture) reopen() {
	f.close()
	f.open()
}

func (f *segFixture) append(ents ...*raftpb.Entry) {
	f.t.Helper()
	if err := f.seg.Append(ents); err != nil {
		f.t.Fatal(err)
	}
}

func (f *segFixture) tail() uint64 { n, _ := f.part.Tail(); return n }

// applyPurge does what the apply of the purge entry at index does to the
// log and the partition.
func (f *segFixture) applyPurge(index uint64) {
	f.t.Helper()
	f.seg.applied(index)
	if err := f.part.Purge(); err != nil {
		f.t.Fatal(err)
	}
	f.purgedAt = index
	f.seg.purged(index)
}

// TestSegLogStoresBatchesOnce: the batch goes to the segment (held, not
// visible), the raft log keeps a 72-byte header, and Entries gives back
// the very bytes from the cache and, once applied, from the segment.
func TestSegLogStoresBatchesOnce(t *testing.T) {
	f := newSegFixture(t)
	e1, e3 := stampedSend(t, 0, 5), stampedSend(t, 5, 3)
	off := (&entry{kind: entryOffsetStore, consumer: storage.KindConsumer, id: 1, offset: 2}).encode()
	want := []*raftpb.Entry{raftEntry(1, 1, e1), raftEntry(2, 1, off), raftEntry(3, 1, e3)}
	f.append(want...)
	if got := f.tail(); got != 8 {
		t.Fatalf("segment tail %d, want 8", got)
	}
	if _, next := f.part.Bounds(); next != 0 {
		t.Fatalf("appended batches visible before apply: next %d", next)
	}
	hdrs, err := f.inner.Entries(1, 4, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(hdrs[0].GetData()); n != entrySendLen || hdrs[0].GetData()[2]&flagStored == 0 {
		t.Fatalf("raft log keeps %d bytes for a batch (flags %#x), want a %d-byte stored header", n, hdrs[0].GetData()[2], entrySendLen)
	}
	if !bytes.Equal(hdrs[1].GetData(), off) {
		t.Fatal("an offset entry was not kept whole")
	}
	check := func(from string) {
		t.Helper()
		got, err := f.seg.Entries(1, 4, ^uint64(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("%s: %d entries", from, len(got))
		}
		for i := range got {
			if !bytes.Equal(got[i].GetData(), want[i].GetData()) || got[i].GetIndex() != want[i].GetIndex() || got[i].GetTerm() != 1 {
				t.Fatalf("%s: entry %d differs from what was appended", from, i+1)
			}
		}
	}
	check("cache")
	f.seg.applied(3)
	check("segment")
	// maxSize counts whole entries: one at least, never the whole batch
	// budget of the headers.
	if got, err := f.seg.Entries(1, 4, 1); err != nil || len(got) != 1 {
		t.Fatalf("Entries with maxSize 1: %d entries, %v", len(got), err)
	}
	if e, err := decodeEntry(hdrs[0].GetData()); err != nil || !e.stored || e.recLen != uint32(len(e1)-entrySendLen) || e.base != 0 || e.count != 5 {
		t.Fatalf("stored header decodes to %+v, %v", e, err)
	}
	if err := f.seg.Append([]*raftpb.Entry{raftEntry(4, 1, hdrs[0].GetData())}); !errors.Is(err, errForeignStored) {
		t.Fatalf("a stored header from raft: %v", err)
	}
}

// TestSegLogReplacesSuffix: raft replacing uncommitted entries cuts the
// segment at the first replaced batch.
func TestSegLogReplacesSuffix(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, stampedSend(t, 5, 3)), raftEntry(3, 1, stampedSend(t, 8, 1)))
	f.part.Reveal(5) // entry 1 committed and applied
	repl := stampedSend(t, 5, 2)
	f.append(raftEntry(2, 2, repl))
	if got := f.tail(); got != 7 {
		t.Fatalf("tail after replacing entries 2..3: %d, want 7", got)
	}
	if last, _ := f.seg.LastIndex(); last != 2 {
		t.Fatalf("last index %d", last)
	}
	f.seg.applied(2)
	got, err := f.seg.Entries(2, 3, ^uint64(0))
	if err != nil || !bytes.Equal(got[0].GetData(), repl) || got[0].GetTerm() != 2 {
		t.Fatalf("replaced entry read back wrong: %v", err)
	}
	// A replacement reaching a revealed batch is refused by storage.
	if err := f.seg.Append([]*raftpb.Entry{raftEntry(1, 3, stampedSend(t, 0, 1))}); !errors.Is(err, storage.ErrTruncateRevealed) {
		t.Fatalf("replacing a committed batch: %v", err)
	}
}

// TestSegLogReconcile: a record the raft log never got (the process died
// between the two writes) is cut at open, committed records are revealed
// at once, and a header whose record is missing stops the group.
func TestSegLogReconcile(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, stampedSend(t, 5, 3)))
	if err := f.seg.SetHardState(&raftpb.HardState{Term: new(uint64(1)), Commit: new(uint64(1))}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.part.AppendStamped(stampedSend(t, 8, 2)[entrySendLen:], 2, 8, 108); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	if got := f.tail(); got != 8 {
		t.Fatalf("tail after reopen %d, want 8 (the orphan record cut)", got)
	}
	if _, next := f.part.Bounds(); next != 5 {
		t.Fatalf("revealed after reopen %d, want 5 (entry 1 committed)", next)
	}
	// An uncommitted header whose record is missing (a crash while raft
	// replaced that entry) is cut from the raft log at open.
	if err := f.part.TruncateFrom(5); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	if last, _ := f.seg.LastIndex(); last != 1 {
		t.Fatalf("last index %d after reopening with entry 2's record gone, want 1", last)
	}
	f.append(raftEntry(2, 2, stampedSend(t, 5, 3)))
	if err := f.seg.SetHardState(&raftpb.HardState{Term: new(uint64(2)), Commit: new(uint64(2))}); err != nil {
		t.Fatal(err)
	}
	f.close()
	// Lose the segment's last record, now committed: the raft log is ahead.
	part, err := storage.Open(f.dir+"/part", storage.Options{Format: commit.BatchFormat{}, Held: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := part.TruncateFrom(5); err != nil {
		t.Fatal(err)
	}
	part.Close()
	inner, err := raftlog.Open(f.dir+"/raft", raftlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	part, err = storage.Open(f.dir+"/part", storage.Options{Format: commit.BatchFormat{}, Held: true})
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	if _, err := openSegLog(inner, part, 0); !errors.Is(err, errSegmentsBehind) {
		t.Fatalf("open with the segment behind the raft log: %v", err)
	}
}

// TestSegLogPurge: a batch after a purge entry not applied yet is kept
// whole in the raft log (the segment cannot take offset 0 before the
// purge), and so is every batch after it until the whole ones applied;
// apply stores them. A reopen in between keeps them whole; once they
// applied, batches go to the segment again. A replaced purge entry holds
// nothing back.
func TestSegLogPurge(t *testing.T) {
	f := newSegFixture(t)
	purge := (&entry{kind: entryPurge}).encode()
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, purge))
	if f.tail() != 5 {
		t.Fatalf("a purge entry changed the segment (tail %d)", f.tail())
	}
	f.append(raftEntry(3, 1, stampedSend(t, 0, 2)), raftEntry(4, 1, stampedSend(t, 2, 1)))
	if f.tail() != 5 {
		t.Fatalf("batches after an unapplied purge went to the segment (tail %d)", f.tail())
	}
	for i := uint64(3); i <= 4; i++ {
		got, err := f.inner.Entries(i, i+1, ^uint64(0))
		if err != nil {
			t.Fatal(err)
		}
		if _, stored := storedHeader(got[0]); stored || len(got[0].GetData()) <= entrySendLen {
			t.Fatalf("entry %d is not kept whole in the raft log (%d bytes)", i, len(got[0].GetData()))
		}
	}
	f.seg.applied(1)
	f.reopen()
	if f.tail() != 5 {
		t.Fatalf("tail after reopen %d, want 5 (the purge has not applied)", f.tail())
	}
	f.applyPurge(2)
	// Apply stores the whole batches (apply.go: AppendStamped).
	for i, b := range [][2]uint64{{0, 2}, {2, 1}} {
		f.seg.applied(uint64(3 + i))
		d := stampedSend(t, b[0], int(b[1]))
		if _, err := f.part.AppendStamped(d[entrySendLen:], uint32(b[1]), b[0], 100+b[0]); err != nil {
			t.Fatal(err)
		}
		f.part.Reveal(b[0] + b[1])
	}
	f.append(raftEntry(5, 1, stampedSend(t, 3, 1)))
	if f.tail() != 4 {
		t.Fatalf("tail %d: the batch after the applied ones did not go to the segment", f.tail())
	}
	f.reopen()
	if f.tail() != 4 {
		t.Fatalf("tail after reopen %d", f.tail())
	}
	// A replaced purge entry is no longer pending.
	f.append(raftEntry(6, 1, purge))
	f.append(raftEntry(6, 2, stampedSend(t, 4, 1)), raftEntry(7, 2, stampedSend(t, 5, 1)))
	if f.tail() != 6 {
		t.Fatalf("batches after a replaced purge entry: tail %d, want 6", f.tail())
	}
}

// TestSegLogReopenWithWholeBatches: batches kept whole and not applied are
// not in the segment, and a reopen neither cuts nor wants them; those that
// applied before the process died stay.
func TestSegLogReopenWithWholeBatches(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, (&entry{kind: entryPurge}).encode()),
		raftEntry(3, 1, stampedSend(t, 0, 2)), raftEntry(4, 1, stampedSend(t, 2, 3)))
	f.seg.applied(1)
	f.applyPurge(2)
	f.seg.applied(3)
	d := stampedSend(t, 0, 2)
	if _, err := f.part.AppendStamped(d[entrySendLen:], 2, 0, 100); err != nil {
		t.Fatal(err)
	}
	// The process dies here: entry 4 is whole and not applied.
	f.reopen()
	if f.tail() != 2 {
		t.Fatalf("tail after reopen %d, want 2 (the applied whole batch)", f.tail())
	}
	// Entry 4 is still held whole: a batch after it is too.
	f.append(raftEntry(5, 1, stampedSend(t, 5, 1)))
	if f.tail() != 2 {
		t.Fatalf("a batch after an unapplied whole one went to the segment (tail %d)", f.tail())
	}
}

// TestSegLogCompactedRecord: a header whose record retention removed
// reads as compacted, so raft sends the snapshot.
func TestSegLogCompactedRecord(t *testing.T) {
	dir := t.TempDir()
	part, err := storage.Open(dir, storage.Options{Format: commit.BatchFormat{}, Held: true, SegmentBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	seg, err := openSegLog(replication.NewMemoryLog(), part, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Revealed one by one: a held partition rolls only when everything
	// in the active segment is revealed.
	if err := seg.Append([]*raftpb.Entry{raftEntry(1, 1, stampedSend(t, 0, 5))}); err != nil {
		t.Fatal(err)
	}
	part.Reveal(5)
	if err := seg.Append([]*raftpb.Entry{raftEntry(2, 1, stampedSend(t, 5, 3))}); err != nil {
		t.Fatal(err)
	}
	part.Reveal(8)
	seg.applied(2)
	if rm, err := part.DeleteOldestSegments(1); err != nil || rm.Segments != 1 {
		t.Fatalf("delete oldest segment: %+v %v", rm, err)
	}
	if _, err := seg.Entries(1, 2, ^uint64(0)); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("entry of a removed record: %v", err)
	}
	if got, err := seg.Entries(2, 3, ^uint64(0)); err != nil || len(got) != 1 {
		t.Fatalf("entry of a retained record: %v", err)
	}
}

// TestSegLogKeyTag: a batch sealed with another key than this node's, or
// plaintext where this node stores sealed batches, stops the append
// (the group) instead of storing bytes this node would serve wrongly.
func TestSegLogKeyTag(t *testing.T) {
	f := newSegFixture(t)
	f.seg.local = fakeLocal{tag: 5, from: 3}
	tagged := func(base uint64, n int, tag uint8) []byte {
		d := stampedSend(t, base, n)
		d[3] = tag
		return d
	}
	f.append(raftEntry(1, 1, tagged(0, 3, 0))) // plaintext below plainBefore: as stored
	f.append(raftEntry(2, 1, tagged(3, 2, 5)))
	for _, tag := range []uint8{7, 0} {
		if err := f.seg.Append([]*raftpb.Entry{raftEntry(3, 1, tagged(5, 1, tag))}); !errors.Is(err, errKeyMismatch) {
			t.Fatalf("batch with key tag %d on a node with tag 5: %v", tag, err)
		}
	}
	f.seg.local = fakeLocal{tag: 0, from: ^uint64(0)}
	if err := f.seg.Append([]*raftpb.Entry{raftEntry(3, 1, tagged(5, 1, 5))}); !errors.Is(err, errKeyMismatch) {
		t.Fatalf("sealed batch on a plaintext node: %v", err)
	}
	if f.tail() != 5 {
		t.Fatalf("tail %d: a refused batch was stored", f.tail())
	}
}

// TestSegLogKeyCheck: a sealed batch whose key tag matches this node's is
// still refused when it does not open with this node's key (a different
// key with the same one-byte tag); one sealed with this node's key is
// stored.
func TestSegLogKeyCheck(t *testing.T) {
	f := newSegFixture(t)
	own, other := testutil.Cipher(t, 1), testutil.Cipher(t, 9)
	f.seg.local = fakeLocal{tag: 5, from: 0, verify: own.VerifyBatch}
	sealed := func(c *encryption.Cipher, base uint64, n int) []byte {
		d := stampedSend(t, base, n)
		enc, err := c.EncryptBatch(nil, d[entrySendLen:])
		if err != nil {
			t.Fatal(err)
		}
		out := append(bytes.Clone(d[:entrySendLen]), enc...)
		out[3] = 5
		return out
	}
	f.append(raftEntry(1, 1, sealed(own, 0, 2)))
	if err := f.seg.Append([]*raftpb.Entry{raftEntry(2, 1, sealed(other, 2, 1))}); !errors.Is(err, errKeyMismatch) {
		t.Fatalf("batch sealed with another key under the same tag: %v", err)
	}
	if f.tail() != 2 {
		t.Fatalf("tail %d: the refused batch was stored", f.tail())
	}
}
