package itest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/wire"
)

// TestClusterRestartRightAfterCompaction: a member whose metadata raft
// log was compacted at its last applied entry restarts and keeps serving
// (it must not compact again at its snapshot's index, which the raft
// storage refuses, stopping the metadata group).
func TestClusterRestartRightAfterCompaction(t *testing.T) {
	opts := []Option{WithBrokerOptions(broker.WithCompactEvery(10))}
	tc := startCluster(t, 3, opts...)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	node := tc.nodes[2].Broker
	caught := func() bool {
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			op := node.Metadata().Op()
			if op == tc.nodes[0].Broker.Metadata().Op() && node.MetadataCompacted() == op {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	for i := 0; !caught(); i++ {
		if i == 30 {
			t.Fatal("the member never compacted at its last applied entry")
		}
		ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: fmt.Sprintf("s%02d", i)}))
	}
	tc.nodes[2].Stop()
	tc.start(t, 2, opts...)
	// It applies new entries, past its next compaction too.
	for i := range 12 {
		ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: fmt.Sprintf("later%02d", i)}))
	}
	deadline := time.Now().Add(10 * time.Second)
	for tc.nodes[2].Broker.Metadata().Op() != tc.nodes[0].Broker.Metadata().Op() {
		if time.Now().After(deadline) {
			t.Fatalf("the restarted member is at op %d, the leader at %d", tc.nodes[2].Broker.Metadata().Op(), tc.nodes[0].Broker.Metadata().Op())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := tc.nodes[2].Dial(t)
	r.LoginRoot()
	if list := string(ExpectPlain(t, r.Call(wire.CmdGetStreams, nil))); !strings.Contains(list, "later11") {
		t.Fatalf("the restarted member lists %q", list)
	}
}
