package itest

import (
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestClusterVerifyOwnReplicas: in a cluster VERIFY_PARTITION checks the
// replicas of the node it is sent to and reports the partitions that node
// does not hold as not held (it is never forwarded).
func TestClusterVerifyOwnReplicas(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 3, Name: "t",
		Options: wire.Options{wire.Uint8Option(wire.TopicOptReplicationFactor, 1)}}))

	// The replica of each partition, from the partition map.
	var replicas [3]uint8
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := partitionMap(t, c, wire.PartitionMapLeadersOnly)
		ready := len(m.Topics) == 1 && len(m.Topics[0].Partitions) == 3
		for _, pl := range m.Topics[0:min(1, len(m.Topics))] {
			for _, p := range pl.Partitions {
				ready = ready && len(p.Replicas) == 1 && p.HasLeader
				if ready {
					replicas[p.PartitionID] = p.Replicas[0]
				}
			}
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition map not ready: %+v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}

	body := (&wire.VerifyPartition{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t")}).AppendTo(nil)
	held := 0
	for i, s := range tc.nodes {
		n := s.Dial(t)
		n.LoginRoot()
		// A node opens its replicas when it applies the topic: wait for
		// them.
		var r wire.VerifyPartitionReply
		var want []wire.VerifyStatus
		for p := range 3 {
			st := wire.VerifyNotHeld
			if replicas[p] == uint8(i) {
				st = wire.VerifyChecked
			}
			want = append(want, st)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if err := r.Decode(ExpectPlain(t, n.Call(wire.CmdVerifyPartition, body))); err != nil {
				t.Fatal(err)
			}
			var got []wire.VerifyStatus
			for _, p := range r.Partitions {
				got = append(got, p.Status)
			}
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: statuses %v, want %v (replicas %v)", i, got, want, replicas)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for p, pv := range r.Partitions {
			if pv.PartitionID != uint32(p) || len(pv.Damaged) != 0 {
				t.Fatalf("node %d: %+v", i, pv)
			}
			if pv.Status == wire.VerifyChecked {
				held++
			}
		}
	}
	if held != 3 {
		t.Fatalf("%d partitions checked over the nodes, want 3 (one replica each)", held)
	}
}
