package raftlog

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// rnode is one raft node of the end-to-end test: a RawNode over a Log and
// a tiny state machine (count and running hash of applied data).
type rnode struct {
	id      uint64
	dir     string
	log     *Log
	rn      *raft.RawNode
	applied uint64
	count   uint64
	hash    uint64
	conf    *pb.ConfState
}

// rcluster delivers messages between rnodes in memory, synchronously.
type rcluster struct {
	t     *testing.T
	base  string
	nodes map[uint64]*rnode // running nodes only
	queue []*pb.Message
}

func newRCluster(t *testing.T) *rcluster {
	return &rcluster{t: t, base: t.TempDir(), nodes: map[uint64]*rnode{}}
}

// start opens node id's log and starts its RawNode; a fresh node is
// bootstrapped with voters 1..3, a restarted one resumes from its
// snapshot and replays its committed entries.
func (c *rcluster) start(id uint64, fresh bool) *rnode {
	c.t.Helper()
	n := &rnode{id: id, dir: filepath.Join(c.base, fmt.Sprint(id)), hash: fnv.New64a().Sum64()}
	n.log = openT(c.t, n.dir, Options{Sync: true, SegmentBytes: 4096, CacheBytes: 8192})
	snap, err := n.log.Snapshot()
	if err != nil {
		c.t.Fatal(err)
	}
	if !raft.IsEmptySnap(snap) {
		n.restore(snap)
	}
	cfg := &raft.Config{
		ID: id, ElectionTick: 10, HeartbeatTick: 1, Storage: n.log, Applied: n.applied,
		MaxSizePerMsg: 16 << 10, MaxInflightMsgs: 64, CheckQuorum: true, PreVote: true,
		Logger: &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)},
	}
	if n.rn, err = raft.NewRawNode(cfg); err != nil {
		c.t.Fatal(err)
	}
	if fresh {
		if err := n.rn.Bootstrap([]raft.Peer{{ID: 1}, {ID: 2}, {ID: 3}}); err != nil {
			c.t.Fatal(err)
		}
	}
	c.nodes[id] = n
	return n
}

func (c *rcluster) stop(id uint64) {
	c.t.Helper()
	if err := c.nodes[id].log.Close(); err != nil {
		c.t.Fatal(err)
	}
	delete(c.nodes, id)
}

func (n *rnode) restore(snap *pb.Snapshot) {
	d := snap.GetData()
	n.count, n.hash = binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint64(d[8:])
	n.applied = snap.GetMetadata().GetIndex()
	n.conf = proto.CloneOf(snap.GetMetadata().GetConfState())
}

func (n *rnode) snapshotData() []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, n.count), n.hash)
}

// process handles every pending Ready of n: snapshot, entries and hard
// state to the Log, then messages out, then committed entries applied.
func (c *rcluster) process(n *rnode) bool {
	c.t.Helper()
	did := false
	for n.rn.HasReady() {
		did = true
		rd := n.rn.Ready()
		if !raft.IsEmptySnap(rd.Snapshot) {
			if err := n.log.ApplySnapshot(rd.Snapshot); err != nil {
				c.t.Fatalf("node %d: apply snapshot: %v", n.id, err)
			}
			n.restore(rd.Snapshot)
		}
		if err := n.log.Append(rd.Entries); err != nil {
			c.t.Fatalf("node %d: append: %v", n.id, err)
		}
		if !raft.IsEmptyHardState(rd.HardState) {
			if err := n.log.SetHardState(rd.HardState); err != nil {
				c.t.Fatalf("node %d: hard state: %v", n.id, err)
			}
		}
		c.queue = append(c.queue, rd.Messages...)
		for _, e := range rd.CommittedEntries {
			c.apply(n, e)
		}
		n.rn.Advance(rd)
	}
	return did
}

func (c *rcluster) apply(n *rnode, e *pb.Entry) {
	if e.GetIndex() <= n.applied {
		return
	}
	if e.GetIndex() != n.applied+1 {
		c.t.Fatalf("node %d: applies %d after %d", n.id, e.GetIndex(), n.applied)
	}
	n.applied = e.GetIndex()
	switch e.GetType() {
	case pb.EntryConfChange:
		cc := &pb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			c.t.Fatal(err)
		}
		n.conf = n.rn.ApplyConfChange(cc)
	case pb.EntryNormal:
		if len(e.GetData()) == 0 {
			return
		}
		h := fnv.New64a()
		_, _ = h.Write(binary.LittleEndian.AppendUint64(nil, n.hash))
		_, _ = h.Write(e.GetData())
		n.count, n.hash = n.count+1, h.Sum64()
	}
}

// settle processes and delivers until nothing moves, then ticks once.
func (c *rcluster) round() {
	for {
		did := false
		for _, n := range c.nodes {
			did = c.process(n) || did
		}
		msgs := c.queue
		c.queue = nil
		for _, m := range msgs {
			if to, ok := c.nodes[m.GetTo()]; ok {
				_ = to.rn.Step(m)
				did = true
			}
		}
		if !did {
			break
		}
	}
	for _, n := range c.nodes {
		n.rn.Tick()
	}
}

func (c *rcluster) runUntil(what string, cond func() bool) {
	c.t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		c.round()
	}
	c.t.Fatalf("timed out waiting for %s", what)
}

func (c *rcluster) leader() *rnode {
	for _, n := range c.nodes {
		if n.rn.Status().RaftState == raft.StateLeader {
			return n
		}
	}
	return nil
}

func (c *rcluster) propose(k int, tag string) {
	c.t.Helper()
	var l *rnode
	c.runUntil("a leader", func() bool { l = c.leader(); return l != nil })
	for i := range k {
		if err := l.rn.Propose(fmt.Appendf(nil, "%s-%d", tag, i)); err != nil {
			c.t.Fatal(err)
		}
		c.round()
	}
}

func (c *rcluster) allApplied(count uint64) func() bool {
	return func() bool {
		for _, n := range c.nodes {
			if n.count != count {
				return false
			}
		}
		return true
	}
}

// TestRaftOverLogSurvivesRestarts runs three raft nodes over Logs:
// entries are committed, a stopped follower catches up from a snapshot
// after the leader compacted, every node restarts from its directory with
// its hard state and log intact, and raft continues at the right index.
func TestRaftOverLogSurvivesRestarts(t *testing.T) {
	c := newRCluster(t)
	for id := uint64(1); id <= 3; id++ {
		c.start(id, true)
	}
	if err := c.nodes[1].rn.Campaign(); err != nil {
		t.Fatal(err)
	}
	c.propose(50, "a")
	c.runUntil("50 applied", c.allApplied(50))

	// Node 3 stops; the others go on and the leader compacts its log.
	c.stop(3)
	c.propose(100, "b")
	c.runUntil("150 applied", c.allApplied(150))
	l := c.leader()
	if _, err := l.log.CreateSnapshot(l.applied, l.conf, l.snapshotData()); err != nil {
		t.Fatal(err)
	}
	if err := l.log.Compact(l.applied); err != nil {
		t.Fatal(err)
	}
	first, _ := l.log.FirstIndex()
	c.start(3, false)
	c.runUntil("node 3 caught up", c.allApplied(150))
	if n3first, _ := c.nodes[3].log.FirstIndex(); n3first != first {
		t.Fatalf("node 3 first index %d, want %d (caught up from the snapshot)", n3first, first)
	}

	// Everyone restarts from disk.
	type saved struct {
		hs         *pb.HardState
		last       uint64
		count      uint64
		hash       uint64
		applyIndex uint64
	}
	before := map[uint64]saved{}
	for id, n := range c.nodes {
		hs, _, _ := n.log.InitialState()
		last, _ := n.log.LastIndex()
		before[id] = saved{hs: hs, last: last, count: n.count, hash: n.hash, applyIndex: n.applied}
	}
	for id := uint64(1); id <= 3; id++ {
		c.stop(id)
	}
	for id := uint64(1); id <= 3; id++ {
		n := c.start(id, false)
		hs, _, _ := n.log.InitialState()
		last, _ := n.log.LastIndex()
		b := before[id]
		if !equalHardState(hs, b.hs) || last != b.last {
			t.Fatalf("node %d after restart: hard state %v last %d, want %v %d", id, hs, last, b.hs, b.last)
		}
		st := n.rn.Status()
		if st.GetTerm() != b.hs.GetTerm() || st.GetCommit() != b.hs.GetCommit() {
			t.Fatalf("node %d raft restarted at term %d commit %d, want %d %d", id, st.GetTerm(), st.GetCommit(), b.hs.GetTerm(), b.hs.GetCommit())
		}
	}
	c.propose(20, "c")
	c.runUntil("170 applied", c.allApplied(170))
	var ref *rnode
	for id, n := range c.nodes {
		if n.applied < before[id].applyIndex+21 {
			t.Fatalf("node %d applied %d after restart, before %d", id, n.applied, before[id].applyIndex)
		}
		if ref != nil && (n.hash != ref.hash || n.applied != ref.applied) {
			t.Fatalf("nodes %d and %d differ: applied %d/%d hash %x/%x", id, ref.id, n.applied, ref.applied, n.hash, ref.hash)
		}
		ref = n
		if n.rn.Status().GetTerm() <= before[id].hs.GetTerm() {
			t.Fatalf("node %d: no new term after restart", id)
		}
	}
	// The new leader's entries continue right after the old log.
	ents, err := ref.log.Entries(before[ref.id].last+1, before[ref.id].last+2, 0)
	if err != nil || len(ents) != 1 || ents[0].GetTerm() <= before[ref.id].hs.GetTerm() {
		t.Fatalf("entry after the old log: %v %v", ents, err)
	}
	for id := uint64(1); id <= 3; id++ {
		c.stop(id)
	}
}
