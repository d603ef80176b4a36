//go:build !windows

package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// TestReplicaMovesUnderLoad: a 3-node cluster (replication factor 3)
// with a 4-partition topic under producer load gets a fourth node with
// `add-node`; the rebalance that follows moves replicas onto it. The new
// node is killed while the first moves copy to it and restarted: the
// moves complete. Every partition then has 3 replicas, its files are on
// exactly those nodes, the replicas hold identical logs and the new node
// serves its partitions' acknowledged messages. Then a node is removed:
// it is drained first (when `remove-node` answers it holds no partition),
// and the partitions keep 3 replicas on the other three. Writes go on
// throughout; the history is checked (every acknowledged message stored
// once at its offset, nothing refused stored, linearizable appends).
func TestReplicaMovesUnderLoad(t *testing.T) {
	const parts = 4
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, parts)
	for p := range uint32(parts) {
		movingProducer(w, p, 2*time.Millisecond)
	}
	time.Sleep(2 * time.Second)

	// A fourth node joins; the rebalance starts moves onto it.
	n := h.grow()
	h.Start(n, "--join")
	pn := h.Layout.Nodes[n]
	if err := adminCall(h, -1, wire.CmdClusterAddNode, &wire.ClusterNodeSpec{ReplicaID: uint8(n), Name: local.NodeName(n),
		IP: h.Layout.IP(n), TCPPort: pn.TCP, ReplicaPort: pn.TCPReplica}); err != nil {
		t.Fatalf("add node %d: %v", n, err)
	}
	t.Logf("node %d added", n)
	// Kill it as soon as a replica is copied to it, then bring it back.
	deadline := time.Now().Add(20 * time.Second)
	for len(h.partitionDirs(n)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no replica moved onto node %d within 20 s", n)
		}
		time.Sleep(time.Millisecond)
	}
	h.Kill(n)
	started, done := h.moveCounts()
	t.Logf("node %d killed with %d replica moves started and %d done", n, started, done)
	if done >= started {
		t.Logf("every move had finished before the kill: the restart below checks no interrupted move")
	}
	time.Sleep(2 * time.Second)
	h.Start(n)
	perNode := h.settle(t, []int{0, 1, 2, n}, parts, 60*time.Second)
	t.Logf("after the rebalance: partitions per node %v", perNode)
	for i, c := range perNode {
		if c < 2 || c > 4 {
			t.Errorf("node %d holds %d partitions, want 2..4 (12 replicas over 4 nodes)", i, c)
		}
	}
	if s, d := h.moveCounts(); d < s || d == 0 {
		t.Errorf("%d moves started, %d done", s, d)
	}
	// The CLI, sent to any node, asks the leader: nothing is left to move.
	out, err := exec.Command(iggoBin, "--addr", h.Addr(2), "cluster", "rebalance").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "nothing to move") {
		t.Errorf("iggo cluster rebalance: %v\n%s", err, out)
	}

	// Node 1 leaves: drained first.
	if err := adminCall(h, -1, wire.CmdClusterRemoveNode, &wire.ClusterRemoveNode{ReplicaID: 1}); err != nil {
		t.Fatalf("remove node 1: %v", err)
	}
	waitNoDirs(t, h, 1, 10*time.Second)
	if lines := h.LogLines(0, "node drained", "replica_id=1"); len(lines) == 0 {
		for _, i := range []int{2, n} {
			lines = append(lines, h.LogLines(i, "node drained", "replica_id=1")...)
		}
		if len(lines) == 0 {
			t.Errorf("no node logged the drain of node 1")
		}
	}
	h.Kill(1)
	h.markPaused(1, true)
	perNode = h.settle(t, []int{0, 2, n}, parts, 60*time.Second)
	t.Logf("after removing node 1: partitions per node %v", perNode)
	w.verifyPlaced(t, h, []int{0, 2, n}, 60*time.Second)
}

// movingProducer starts a client appending one message at a time to
// partition, talking to one node until it refuses (not the partition's
// leader, or not holding it), then to the next: it finds the partition's
// leader wherever the moves put it.
func movingProducer(w *Workload, partition uint32, pause time.Duration) {
	client := w.newClient()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var c *local.Conn
		node := int(partition) % w.h.N()
		drop := func() {
			if c != nil {
				c.Close()
				c = nil
			}
			node = (node + 1) % w.h.N()
		}
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		var seq uint64
		for !w.stopped() {
			if c == nil {
				if slices.Contains(w.h.Down(), node) {
					drop()
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				conn, err := local.DialLogin(ctx, w.h.Addr(node))
				cancel()
				if err != nil {
					drop()
					time.Sleep(20 * time.Millisecond)
					continue
				}
				conn.Timeout = requestTimeout
				c = conn
			}
			seq++
			id := msgID(client, seq)
			batch, err := oneMessage(id)
			if err != nil {
				panic(err) // a fixed-size message always builds
			}
			op := Op{Client: client, Kind: Append, Partition: partition, MsgID: id, Node: node, Call: w.History.Now()}
			off, err := c.Send(w.Stream, w.Topic, partition, batch)
			op.Return, op.Offset, op.Err = w.History.Now(), off, err
			var ioe *local.IOError
			switch code := local.ErrorCode(err); {
			case err == nil:
				op.Outcome = OK
			case errors.As(err, &ioe):
				op.Outcome = Failed
				if ioe.Sent {
					op.Outcome = Unknown
				}
				drop()
			case code == wire.ErrTransientNotCommitted.Code:
				op.Outcome, op.Code = Unknown, code
			default:
				// Not admitted here: 58, or the partition is not on
				// this node.
				op.Outcome, op.Code = Failed, code
				drop()
			}
			w.History.Add(op)
			if op.Outcome != OK {
				time.Sleep(20 * time.Millisecond)
			} else if pause > 0 {
				time.Sleep(pause)
			}
		}
	}()
}

// grow adds a node to the layout (fresh loopback ports, a configuration
// whose roster lists every node) and returns its index; it is not
// started.
func (h *Harness) grow() int {
	h.t.Helper()
	ports := freePorts(h.t, 2)
	h.mu.Lock()
	h.Layout.Nodes = append(h.Layout.Nodes, local.Ports{TCP: ports[0], TCPReplica: ports[1]})
	h.procs = append(h.procs, nil)
	h.paused = append(h.paused, false)
	i := len(h.procs) - 1
	h.mu.Unlock()
	if err := h.Layout.WriteConfig(i); err != nil {
		h.t.Fatal(err)
	}
	return i
}

// adminCall sends an administration command to the metadata leader (as
// the running nodes other than skip report it), retrying on 58 and while
// no leader is known, for up to a minute.
func adminCall(h *Harness, skip int, code wire.Command, body wire.Body) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := callLeader(h, skip, code, body)
		if err == nil {
			return nil
		}
		if ec := local.ErrorCode(err); (ec != 0 && ec != wire.ErrTransientNotAccepted.Code) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// partitionDirs lists the partition directories in node i's data
// directory (stream/topic/partition, relative).
func (h *Harness) partitionDirs(i int) []string {
	base := filepath.Join(h.Layout.DataDir(i), "streams")
	dirs, _ := filepath.Glob(filepath.Join(base, "*", "topics", "*", "partitions", "*"))
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if r, err := filepath.Rel(base, d); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// moveCounts counts the replica moves the nodes logged as started and
// as finished (done or given up).
func (h *Harness) moveCounts() (started, done int) {
	for i := range h.N() {
		started += len(h.LogLines(i, "replica move started"))
		done += len(h.LogLines(i, "replica move done")) + len(h.LogLines(i, "replica move given up"))
	}
	return started, done
}

// waitNoDirs waits until node i holds no partition directory.
func waitNoDirs(t *testing.T, h *Harness, i int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d := h.partitionDirs(i)
		if len(d) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d still holds partitions %v", i, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle waits until every partition's directory is on exactly 3 of the
// nodes, only on nodes, and every move the nodes logged as started has
// finished; it returns the partitions per node.
func (h *Harness) settle(t *testing.T, nodes []int, parts int, within time.Duration) map[int]int {
	t.Helper()
	deadline := time.Now().Add(within)
	var why string
	for {
		perNode, holders, ok := map[int]int{}, map[string][]int{}, true
		for i := range h.N() {
			dirs := h.partitionDirs(i)
			if len(dirs) > 0 && !slices.Contains(nodes, i) {
				ok, why = false, fmt.Sprintf("node %d, not a member, holds %v", i, dirs)
			}
			perNode[i] = len(dirs)
			for _, d := range dirs {
				holders[d] = append(holders[d], i)
			}
		}
		if ok && len(holders) != parts {
			ok, why = false, fmt.Sprintf("%d partitions on disk, want %d", len(holders), parts)
		}
		for d, hs := range holders {
			if ok && len(hs) != 3 {
				ok, why = false, fmt.Sprintf("partition %s on nodes %v", d, hs)
			}
		}
		if started, done := h.moveCounts(); ok && done < started {
			ok, why = false, fmt.Sprintf("%d moves started, %d finished", started, done)
		}
		if ok {
			return perNode
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement not settled within %s: %s", within, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// verifyPlaced stops the load and checks the history against the
// partitions as their replicas store them: each partition is read from
// every node that holds its files, which must serve the same log within
// catchUp, then checked as Verify checks (every acknowledged append
// stored once at its offset, nothing refused stored, the appends and the
// final reads linearizable).
func (w *Workload) verifyPlaced(t *testing.T, h *Harness, nodes []int, catchUp time.Duration) {
	t.Helper()
	w.Stop()
	logs := make([][]uint64, w.Partitions)
	deadline := time.Now().Add(catchUp)
	call := w.History.Now()
	for p := range w.Partitions {
		var holders []int
		for _, i := range nodes {
			for _, d := range h.partitionDirs(i) {
				if filepath.Base(d) == fmt.Sprint(p) {
					holders = append(holders, i)
				}
			}
		}
		if len(holders) != 3 {
			t.Fatalf("partition %d held by %v", p, holders)
		}
		for {
			var why string
			read := make([][]uint64, len(holders))
			for k, i := range holders {
				got, err := w.readOne(i, p)
				switch {
				case err != nil:
					why = fmt.Sprintf("node %d: %v", i, err)
				case k > 0 && !slices.Equal(got, read[0]):
					why = fmt.Sprintf("node %d serves %d messages, node %d %d", i, len(got), holders[0], len(read[0]))
				}
				read[k] = got
			}
			if why == "" {
				logs[p] = read[0]
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("partition %d: replicas differ %s after the load stopped: %s", p, catchUp, why)
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("partition %d: %d messages, identical on nodes %v", p, len(logs[p]), holders)
	}
	ret := w.History.Now()
	for p, l := range logs {
		w.History.Add(Op{Client: -1, Kind: Read, Partition: uint32(p), Log: l, Call: call, Return: ret, Outcome: OK, Node: -1, Final: true})
	}
	ops := w.History.Ops()
	r := checkLogs(ops, logs)
	r.WritesLinearizable = CheckLinearizable(writesOnly(ops))
	t.Logf("history: %v; stored per partition %v; appends of unknown outcome stored: %d; appends linearizable: %v",
		r.Counts, r.Stored, r.UnknownStored, r.WritesLinearizable)
	if r.Counts.Acked == 0 {
		t.Errorf("no append acknowledged")
	}
	for _, a := range r.Anomalies {
		t.Errorf("anomaly: %s", a)
	}
	if r.Total > len(r.Anomalies) {
		t.Errorf("%d anomalies in all", r.Total)
	}
	if r.WritesLinearizable != porcupine.Ok {
		t.Errorf("the appends (with the final reads) are not linearizable: %v", r.WritesLinearizable)
	}
}
