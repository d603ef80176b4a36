//go:build !windows

package clustertest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// TestWipedFollowerRestart restarts a follower with an empty data
// directory under load. The node either rejoins and catches up (then it
// must hold the same log as the leader), or refuses to start with a clear
// error in its log (an exit, not a crash: a Go panic fails the test); in
// both cases the other two keep acknowledging writes. A refused node is
// then brought back as its error line says, under its own replica id
// (rejoin), and must hold the leader's logs at the end.
func TestWipedFollowerRestart(t *testing.T) {
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 1)
	runLoad(w, 3)
	time.Sleep(2 * time.Second)
	leader := h.WaitLeader(10 * time.Second)
	victim := (leader + 2) % h.N()
	from := w.History.Now()
	h.Restart(victim, true)
	// Give it time to rejoin or to give up.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !h.Exited(victim) {
		if _, err := w.readAll(victim); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if n := acksBetween(w.History.Ops(), from, w.History.Now()); n == 0 {
		t.Errorf("no write acknowledged after follower node %d restarted wiped", victim)
	}
	if h.Exited(victim) {
		lines := h.LogLines(victim, "level=ERROR")
		if len(lines) == 0 {
			t.Errorf("wiped node %d exited without an ERROR line in its log", victim)
		}
		// A refusal is a deliberate exit with an operator-facing reason; a
		// crash (a Go panic) is not one.
		if panics := h.LogLines(victim, "panic: "); len(panics) > 0 {
			t.Errorf("wiped node %d crashed instead of refusing to start or rejoining (%v): %s", victim, h.proc(victim).Err(), strings.Join(panics, " | "))
		}
		t.Logf("wiped node %d exited (%v): %s", victim, h.proc(victim).Err(), strings.Join(lines, " | "))
		rejoin(t, h, victim)
		w.Verify(t, 60*time.Second)
		return
	}
	t.Logf("wiped node %d rejoined", victim)
	w.Verify(t, 60*time.Second)
}

// rejoin brings back node i, refused after its data directory was wiped,
// the way its error line says: remove it (CLUSTER_REMOVE_NODE on the
// leader), start it again with an empty data directory and --join, and
// add it under the same replica id and ports (CLUSTER_ADD_NODE), which
// returns once it holds every group's log and votes again.
func rejoin(t *testing.T, h *Harness, i int) {
	t.Helper()
	if got := h.LogLines(i, "iggo cluster remove-node --replica-id"); len(got) == 0 {
		t.Errorf("node %d's refusal does not name the recovery", i)
	}
	admin := func(code wire.Command, body wire.Body) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			err := callLeader(h, i, code, body)
			if err == nil {
				return
			}
			// No leader known yet, or 58: the leadership moved meanwhile;
			// the command is retried on the leader.
			if ec := local.ErrorCode(err); (ec != 0 && ec != wire.ErrTransientNotAccepted.Code) || time.Now().After(deadline) {
				t.Fatalf("command %d for node %d: %v", code, i, err)
			}
		}
	}
	admin(wire.CmdClusterRemoveNode, &wire.ClusterRemoveNode{ReplicaID: uint8(i)})
	t.Logf("node %d removed", i)
	h.Restart(i, true, "--join")
	p := h.Layout.Nodes[i]
	admin(wire.CmdClusterAddNode, &wire.ClusterNodeSpec{ReplicaID: uint8(i), Name: local.NodeName(i), IP: h.Layout.IP(i),
		TCPPort: p.TCP, ReplicaPort: p.TCPReplica, HTTPPort: p.HTTP})
	t.Logf("node %d added back under its replica id", i)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		m, err := h.Metadata(i)
		if err == nil && len(m.Nodes) == h.N() {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node %d after rejoining: metadata %+v, %v", i, m, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// callLeader sends an administration command to the metadata leader as
// the nodes other than skip report it (the harness's leader survey wants
// every roster node, which a removed one is not).
func callLeader(h *Harness, skip int, code wire.Command, body wire.Body) error {
	for j := range h.N() {
		if j == skip {
			continue
		}
		m, err := h.Metadata(j)
		if err != nil {
			continue
		}
		l := local.LeaderIndex(m)
		if l < 0 {
			continue
		}
		n := m.Nodes[l]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := local.DialLogin(ctx, net.JoinHostPort(n.IP, strconv.Itoa(int(n.TCPPort))))
		cancel()
		if err != nil {
			return err
		}
		c.Timeout = 60 * time.Second
		_, err = c.Call(code, body)
		c.Close()
		return err
	}
	return errors.New("no node reports a leader")
}
