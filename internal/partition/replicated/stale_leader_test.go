package replicated

import (
	"encoding/binary"
	"io"
	"log"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// raftFixture drives a real raft.RawNode (node 1 of voters 1, 2, 3) over a
// partition's log storage (a stampLog over a segLog over a durable raft
// log and a held partition), its Prepare hook run before each proposal as
// the host's loop runs it. Peers 2 and 3 are played by the test with the
// messages they would send.
type raftFixture struct {
	t     *testing.T
	seg   *segFixture
	stamp stampFixture
	rn    *raft.RawNode
}

func newRaftFixture(t *testing.T) *raftFixture {
	t.Helper()
	f := &raftFixture{t: t, seg: newSegFixture(t)}
	// The group's start: a bootstrap snapshot of the empty partition.
	snap := &raftpb.Snapshot{Data: partSnapshot{}.encode(), Metadata: &raftpb.SnapshotMetadata{
		Index: new(uint64(1)), Term: new(uint64(1)), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}
	if err := f.seg.seg.ApplySnapshot(snap); err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return time.UnixMicro(1000) }
	var err error
	f.stamp, err = newTestStamp(f.seg.seg, 0, clock, f.seg.part.Tail)
	if err != nil {
		t.Fatal(err)
	}
	f.rn, err = raft.NewRawNode(&raft.Config{
		ID: 1, ElectionTick: 10, HeartbeatTick: 1, Storage: f.stamp.stampLog,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, DisableProposalForwarding: true,
		Logger: &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// drain handles every Ready as the host does (synchronous storage):
// snapshot, entries, hard state, then Advance. Nothing commits here.
func (f *raftFixture) drain() {
	f.t.Helper()
	for f.rn.HasReady() {
		rd := f.rn.Ready()
		if !raft.IsEmptySnap(rd.Snapshot) {
			f.t.Fatal("unexpected snapshot")
		}
		if len(rd.Entries) > 0 {
			if err := f.stamp.Append(rd.Entries); err != nil {
				f.t.Fatalf("append of entries %d..%d: %v", rd.Entries[0].GetIndex(), rd.Entries[len(rd.Entries)-1].GetIndex(), err)
			}
		}
		if !raft.IsEmptyHardState(rd.HardState) {
			if err := f.stamp.SetHardState(rd.HardState); err != nil {
				f.t.Fatal(err)
			}
		}
		f.rn.Advance(rd)
	}
}

// lead makes node 1 leader of the next term with node 2's vote.
func (f *raftFixture) lead() {
	f.t.Helper()
	if err := f.rn.Campaign(); err != nil {
		f.t.Fatal(err)
	}
	f.drain()
	term := f.rn.BasicStatus().GetTerm()
	f.step(&raftpb.Message{Type: raftpb.MsgVoteResp.Enum(), From: new(uint64(2)), To: new(uint64(1)), Term: new(term)})
	if st := f.rn.BasicStatus(); st.RaftState != raft.StateLeader {
		f.t.Fatalf("node 1 is %v after winning the vote", st.RaftState)
	}
}

func (f *raftFixture) step(m *raftpb.Message) {
	f.t.Helper()
	if err := f.rn.Step(m); err != nil {
		f.t.Fatal(err)
	}
	f.drain()
}

// propose runs a send of n messages through the Prepare hook and raft, as
// Host.proposeData does, without handling the Ready: it returns the
// stamped base offset.
func (f *raftFixture) propose(n int) uint64 {
	f.t.Helper()
	data := (&entry{kind: entrySend, count: uint32(n), rec: testutil.Batch(f.t, n)}).encode()
	accepted, err := f.stamp.prepare(data)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.rn.Propose(data); err != nil {
		f.t.Fatal(err)
	}
	accepted()
	return binary.LittleEndian.Uint64(data[offSendBase:])
}

// TestStaleLeaderProposalReplacedBeforeStored is the fault test's "record
// base offset 433, next offset 431": a leader frozen with proposals queued
// is continued, stamps them against its tail and raft admits them; in the
// same loop pass, before their Ready, the new leader's append replaces
// them in raft's unstable log. The Ready then starts right after the
// stored log (no stored entry is replaced) and carries no batch. When
// leadership comes back to the node, its next batch must be stamped at
// the segment's next offset, not after the lost proposals.
func TestStaleLeaderProposalReplacedBeforeStored(t *testing.T) {
	f := newRaftFixture(t)
	f.lead() // empty entry at 2
	if base := f.propose(2); base != 0 {
		t.Fatalf("first batch stamped at %d", base)
	}
	f.drain() // stored at index 3, offsets 0..1
	if next, _ := f.seg.part.Tail(); next != 2 {
		t.Fatalf("segment next %d after the first batch", next)
	}

	// Continued: a queued proposal is stamped at 2 and admitted.
	if base := f.propose(3); base != 2 {
		t.Fatalf("stale batch stamped at %d", base)
	}
	f.replaceUnstored()

	// Leadership comes back (the balancer's transfer).
	f.lead()
	if base := f.propose(4); base != 2 {
		t.Errorf("batch stamped at %d after the lost proposal, want the segment's next offset 2", base)
	}
	f.drain()
	if next, _ := f.seg.part.Tail(); next != 6 {
		t.Fatalf("segment next %d, want 6", next)
	}
}

// replaceUnstored steps the append of node 2, leader of the next term
// (its empty entry right after node 1's stored log), before the Ready of
// what node 1 proposed since the last one: raft replaces those entries in
// its unstable log, and the Ready starts right after the stored log.
func (f *raftFixture) replaceUnstored() {
	f.t.Helper()
	prev, err := f.stamp.LastIndex()
	if err != nil {
		f.t.Fatal(err)
	}
	prevTerm, err := f.stamp.Term(prev)
	if err != nil {
		f.t.Fatal(err)
	}
	next, term := f.seg.tail(), f.rn.BasicStatus().GetTerm()+1
	f.step(&raftpb.Message{Type: raftpb.MsgApp.Enum(), From: new(uint64(2)), To: new(uint64(1)), Term: new(term),
		LogTerm: new(prevTerm), Index: new(prev), Entries: []*raftpb.Entry{{Index: new(prev + 1), Term: new(term)}}})
	if got, _ := f.stamp.Term(prev + 1); got != term {
		f.t.Fatalf("entry %d has term %d, want node 2's %d", prev+1, got, term)
	}
	if last, _ := f.stamp.LastIndex(); last != prev+1 {
		f.t.Fatalf("last index %d, want node 2's entry at %d", last, prev+1)
	}
	if st := f.rn.BasicStatus(); st.RaftState != raft.StateFollower {
		f.t.Fatalf("node 1 is %v after a higher term's append", st.RaftState)
	}
	if got := f.seg.tail(); got != next {
		f.t.Fatalf("segment next %d after node 2's append, want %d", got, next)
	}
}

// TestStaleLeaderRequestAndPurgeReplacedBeforeStored: a windowed request
// and a purge a stale leader admitted and raft replaced before they were
// stored leave nothing behind: the request is not in flight, no purge is
// pending and its identity may be proposed again.
func TestStaleLeaderRequestAndPurgeReplacedBeforeStored(t *testing.T) {
	f := newRaftFixture(t)
	f.lead()
	f.propose(2)
	f.drain()

	key := commit.Key{Client: wire.Uint128{Lo: 7}, Request: 1, Hash: 1}
	windowed := (&entry{kind: entryOffsetStore, windowed: true, key: key}).encode()
	purge := (&entry{kind: entryPurge, purgeID: 9}).encode()
	for _, data := range [][]byte{windowed, purge} {
		accepted, err := f.stamp.prepare(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.rn.Propose(data); err != nil {
			t.Fatal(err)
		}
		accepted()
	}
	f.replaceUnstored()

	f.lead()
	if _, err := f.stamp.prepare(windowed); err != nil {
		t.Errorf("request of a lost proposal: %v", err)
	}
	if f.stamp.purgePending() {
		t.Error("a lost purge is still pending")
	}
	if f.stamp.purgeInLog(9) {
		t.Error("the identity of a lost purge is still in the log")
	}
	if base := f.propose(1); base != 2 {
		t.Errorf("batch stamped at %d, want 2", base)
	}
	f.drain()
}
