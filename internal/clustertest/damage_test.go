//go:build !windows

package clustertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// Damage test parameters: batches of damageBatch messages of
// damagePayload bytes, damageRounds batches per round of writes, in
// topics of 1 MiB segments, so each round fills about two segments.
const (
	damageBatch   = 20
	damagePayload = 1000
	damageRounds  = 100
	// repairWithin is the bound: the partition is readable and
	// writable through every node, and the damaged replica rebuilt.
	repairWithin = 60 * time.Second
)

// damageWriter writes numbered batches to partition 0 of s/t and
// remembers which messages were acknowledged and which may have been
// stored (a send without a usable answer).
type damageWriter struct {
	h      *Harness
	next   uint64
	acked  []uint64
	maybe  map[uint64]bool
	stream wire.Identifier
	topic  wire.Identifier
}

// write sends n batches through node i (any node: a follower forwards
// to the partition's leader), retrying a refused batch on another node.
func (w *damageWriter) write(t *testing.T, i, n int) {
	t.Helper()
	deadline := time.Now().Add(repairWithin)
	for sent := 0; sent < n; {
		err := w.sendOne(i)
		if err == nil {
			sent++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("send through node %d: %v", i, err)
		}
		i = (i + 1) % w.h.N()
		time.Sleep(200 * time.Millisecond)
	}
}

// sendOne sends one batch through node i.
func (w *damageWriter) sendOne(i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := local.DialLogin(ctx, w.h.Addr(i))
	if err != nil {
		return err
	}
	defer c.Close()
	c.Timeout = 10 * time.Second
	var b wire.BatchBuilder
	b.Reset(nil)
	ids := make([]uint64, damageBatch)
	for k := range ids {
		w.next++
		ids[k] = w.next
		payload := bytes.Repeat([]byte{byte('a' + w.next%26)}, damagePayload)
		copy(payload, fmt.Sprintf("%016x", w.next))
		if err := b.Add(wire.Uint128{Lo: w.next}, uint64(time.Now().UnixMicro()), payload, nil); err != nil {
			return err
		}
	}
	batch, err := b.Finish()
	if err != nil {
		return err
	}
	_, err = c.Send(w.stream, w.topic, 0, batch)
	if err == nil {
		w.acked = append(w.acked, ids...)
		return nil
	}
	if code := local.ErrorCode(err); code == 0 || code == wire.ErrTransientNotCommitted.Code {
		for _, id := range ids {
			w.maybe[id] = true // no usable answer: it may be stored
		}
	}
	return err
}

// check reads partition 0 through every node and requires each to serve
// every acknowledged message once, in the order acknowledged, and
// nothing but acknowledged messages and those of unknown outcome.
func (w *damageWriter) check(h *Harness) error {
	for i := range h.N() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := local.DialLogin(ctx, h.Addr(i))
		cancel()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		c.Timeout = 10 * time.Second
		got, err := readPartition(c, w.stream, w.topic, 0)
		c.Close()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		var known []uint64
		for _, id := range got {
			if !w.maybe[id] {
				known = append(known, id)
			}
		}
		if !slices.Equal(known, w.acked) {
			return fmt.Errorf("node %d serves %d messages (%d acknowledged ones), want the %d acknowledged", i, len(got), len(known), len(w.acked))
		}
	}
	return nil
}

// TestDamagedReplicaRebuilds damages one replica of a partition at a
// time on a 3-node cluster of real processes — a flipped byte in a record
// of a follower's segment, then of the leader's, then a truncated raft log
// file of a follower — and restarts that node: within 60 s the partition
// must be readable and writable through every node, the damaged node must
// have logged its rebuild and hold exactly the leader's record bytes, and
// nothing acknowledged may be lost.
func TestDamagedReplicaRebuilds(t *testing.T) {
	h := StartCluster(t, 3)
	c, leader := h.DialLeader()
	if _, err := c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}); err != nil {
		t.Fatalf("create stream on node %d: %v", leader, err)
	}
	opts := wire.Options{wire.StringOption(wire.TopicOptSegmentSize, "1 MiB")}
	if _, err := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 1, Name: "t", Options: opts}); err != nil {
		t.Fatalf("create topic on node %d: %v", leader, err)
	}
	c.Close()
	w := &damageWriter{h: h, maybe: map[uint64]bool{}, stream: wire.NamedID("s"), topic: wire.NamedID("t")}
	w.write(t, 0, damageRounds)

	cases := []struct {
		name   string
		leader bool // damage the partition's leader, else a follower
		all    bool // stop and restart the whole cluster around the damage
		damage func(t *testing.T, dir string) string
	}{
		{"follower segment", false, false, flipSealedRecord},
		{"leader segment", true, false, flipSealedRecord},
		{"follower raft log", false, false, truncateRaftLog},
		// The report: the whole cluster stopped, one byte flipped
		// on one node, the cluster started again.
		{"cluster restart", false, true, flipSealedRecord},
	}
	for _, tc := range cases {
		ok := t.Run(tc.name, func(t *testing.T) {
			pl := partitionLeader(t, h)
			victim := pl
			if !tc.leader {
				victim = (pl + 1) % h.N()
			}
			dir := partitionDir(t, h, victim)
			rebuilt := len(h.LogLines(victim, "partition replica rebuilt"))
			h.Kill(victim)
			if tc.all {
				for i := range h.N() {
					if i != victim {
						h.Kill(i)
					}
				}
			}
			what := tc.damage(t, dir)
			t.Logf("node %d (partition leader %d): %s", victim, pl, what)
			if !tc.all {
				// The others keep taking writes while it is down.
				w.write(t, (victim+1)%h.N(), 10)
			}
			start := time.Now()
			h.Start(victim)
			if tc.all {
				for i := range h.N() {
					if i != victim {
						h.Start(i)
					}
				}
			}
			// Writable through every node, the damaged one included.
			for i := range h.N() {
				w.write(t, i, 5)
			}
			var last error
			for {
				last = nil
				switch {
				case len(h.LogLines(victim, "partition replica rebuilt")) <= rebuilt:
					last = errors.New("no \"partition replica rebuilt\" line yet")
				default:
					last = w.check(h)
					if last == nil {
						last = sameRecords(h, victim)
					}
				}
				if last == nil {
					break
				}
				if time.Since(start) > repairWithin {
					t.Fatalf("node %d not repaired within %s: %v", victim, repairWithin, last)
				}
				time.Sleep(500 * time.Millisecond)
			}
			t.Logf("node %d rebuilt and identical to the leader %s after its restart", victim, time.Since(start).Round(100*time.Millisecond))
			if got := h.LogLines(victim, "partition replica damaged; rebuilding from its peers"); len(got) == 0 {
				t.Errorf("node %d did not log the damage", victim)
			}
			if got := h.LogLines(victim, "panic: "); len(got) > 0 {
				t.Errorf("node %d panicked: %s", victim, strings.Join(got, " | "))
			}
			// More writes after the repair, through every node.
			for i := range h.N() {
				w.write(t, i, 3)
			}
			if err := w.check(h); err != nil {
				t.Fatal(err)
			}
		})
		if !ok {
			return
		}
	}
}

// partitionLeader returns the leader of partition 0 of s/t as the
// partition map of a node reports it.
func partitionLeader(t *testing.T, h *Harness) int {
	t.Helper()
	deadline := time.Now().Add(repairWithin)
	for i := 0; ; i++ {
		m, err := partitionMap(h, i%h.N())
		if err == nil && len(m.Topics) == 1 && len(m.Topics[0].Partitions) == 1 && m.Topics[0].Partitions[0].HasLeader {
			return int(m.Topics[0].Partitions[0].Leader)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no partition leader known: %+v %v", m, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// partitionDir is the directory of partition 0 on node i.
func partitionDir(t *testing.T, h *Harness, i int) string {
	t.Helper()
	dirs := h.partitionDirs(i)
	if len(dirs) != 1 {
		t.Fatalf("node %d holds partitions %v, want one", i, dirs)
	}
	return filepath.Join(h.Layout.DataDir(i), "streams", dirs[0])
}

// segmentFiles lists the segment logs of a partition directory in
// offset order.
func segmentFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(files)
	return files
}

// flipSealedRecord flips one byte inside the last record of the first
// sealed segment of dir (a message payload), which fails the record's
// checksum.
func flipSealedRecord(t *testing.T, dir string) string {
	t.Helper()
	files := segmentFiles(dir)
	if len(files) < 2 {
		t.Fatalf("%s holds %d segments, want a sealed one", dir, len(files))
	}
	f, err := os.OpenFile(files[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pos := fi.Size() - damagePayload/2
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x20
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("flipped the byte at %d of %s", pos, filepath.Base(files[0]))
}

// truncateRaftLog cuts the partition group's raft log file to half its
// length: entries the node acknowledged are gone.
func truncateRaftLog(t *testing.T, dir string) string {
	t.Helper()
	files := segmentFiles(filepath.Join(dir, "raft"))
	if len(files) == 0 {
		t.Fatalf("no raft log file in %s", filepath.Join(dir, "raft"))
	}
	last := files[len(files)-1]
	fi, err := os.Stat(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(last, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("truncated raft log %s from %d to %d bytes", filepath.Base(last), fi.Size(), fi.Size()/2)
}

// sameRecords compares the record bytes of partition 0 on node i with
// those of every other node: the concatenation of their segment logs.
func sameRecords(h *Harness, i int) error {
	read := func(n int) ([]byte, error) {
		dirs := h.partitionDirs(n)
		if len(dirs) != 1 {
			return nil, fmt.Errorf("node %d holds partitions %v", n, dirs)
		}
		var all []byte
		for _, f := range segmentFiles(filepath.Join(h.Layout.DataDir(n), "streams", dirs[0])) {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			all = append(all, b...)
		}
		return all, nil
	}
	mine, err := read(i)
	if err != nil {
		return err
	}
	for n := range h.N() {
		if n == i {
			continue
		}
		theirs, err := read(n)
		if err != nil {
			return err
		}
		if !bytes.Equal(mine, theirs) {
			return fmt.Errorf("node %d holds %d bytes of records, node %d %d (or other bytes)", i, len(mine), n, len(theirs))
		}
	}
	return nil
}

// TestDamagedMetadataLogRefused truncates the metadata group's raft log
// file of a follower: the node must refuse to start with one ERROR line
// that names the directory and the recovery (remove-node, an empty data
// directory with --join, add-node), not crash; the other two keep the
// cluster, and the node comes back the way the line says.
func TestDamagedMetadataLogRefused(t *testing.T) {
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 1)
	runLoad(w, 2)
	time.Sleep(2 * time.Second)
	leader := h.WaitLeader(10 * time.Second)
	victim := (leader + 1) % h.N()
	h.Kill(victim)
	dir := filepath.Join(h.Layout.DataDir(victim), "cluster", "metadata")
	files := segmentFiles(dir)
	if len(files) == 0 {
		t.Fatalf("no metadata raft log file in %s", dir)
	}
	last := files[len(files)-1]
	fi, err := os.Stat(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(last, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	t.Logf("node %d: truncated %s from %d to %d bytes", victim, last, fi.Size(), fi.Size()/2)
	h.Start(victim)
	deadline := time.Now().Add(repairWithin)
	for !h.Exited(victim) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d with a truncated metadata raft log still runs", victim)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := h.LogLines(victim, "panic: "); len(got) > 0 {
		t.Fatalf("node %d crashed: %s", victim, strings.Join(got, " | "))
	}
	lines := h.LogLines(victim, "metadata raft log in "+dir+" is damaged")
	if len(lines) == 0 {
		t.Fatalf("node %d exited without naming the damaged metadata log: %v", victim, h.LogLines(victim, "level=ERROR"))
	}
	t.Logf("node %d refused: %s", victim, lines[0])
	// remove-node takes a node without draining it first once the
	// leader found it unreachable (an election timeout after it exited):
	// until then it answers 2018, as for a reachable node whose replicas
	// no other node can take.
	for deadline := time.Now().Add(repairWithin); ; time.Sleep(500 * time.Millisecond) {
		err := callLeader(h, victim, wire.CmdClusterRemoveNode, &wire.ClusterRemoveNode{ReplicaID: uint8(victim)})
		if err == nil {
			break
		}
		ec := local.ErrorCode(err)
		if (ec != wire.ErrInvalidReplicationFactor.Code && ec != wire.ErrTransientNotAccepted.Code) || time.Now().After(deadline) {
			t.Fatalf("remove node %d: %v", victim, err)
		}
	}
	t.Logf("node %d removed", victim)
	h.Restart(victim, true, "--join")
	p := h.Layout.Nodes[victim]
	for deadline := time.Now().Add(repairWithin); ; time.Sleep(500 * time.Millisecond) {
		err := callLeader(h, victim, wire.CmdClusterAddNode, &wire.ClusterNodeSpec{ReplicaID: uint8(victim), Name: local.NodeName(victim), IP: h.Layout.IP(victim),
			TCPPort: p.TCP, ReplicaPort: p.TCPReplica, HTTPPort: p.HTTP})
		if err == nil {
			break
		}
		if ec := local.ErrorCode(err); ec != wire.ErrTransientNotAccepted.Code || time.Now().After(deadline) {
			t.Fatalf("add node %d back: %v", victim, err)
		}
	}
	t.Logf("node %d added back under its replica id", victim)
	w.Verify(t, 60*time.Second)
}
