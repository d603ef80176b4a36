//go:build !windows

package clustertest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// errOffsets marks a poll whose offsets were not contiguous from 0: an
// anomaly wherever it is seen.
var errOffsets = errors.New("offsets not contiguous")

// Report is what Verify found.
type Report struct {
	Counts Counts
	// Stored is the number of messages stored per partition (leader).
	Stored []int
	// UnknownStored is how many appends of unknown outcome were stored.
	UnknownStored int
	// Anomalies lists the first violations found; empty is a pass.
	Anomalies []string
	// Total counts every violation found.
	Total int
	// Linearizable is porcupine's verdict on the whole history (appends,
	// leader reads and the final reads).
	Linearizable porcupine.CheckResult
	// WritesLinearizable is the verdict on the appends and the final reads
	// only.
	WritesLinearizable porcupine.CheckResult
	// StaleReads lists leader reads that missed an acknowledged append:
	// the binary protocol has no linearizable read (cluster-contract.md
	// §6: polls are served from the node's applied state), so a node that
	// still believes it leads can serve one; they are findings, not
	// failures.
	StaleReads []string
}

func (r *Report) anomaly(format string, args ...any) {
	r.Total++
	if len(r.Anomalies) < 30 {
		r.Anomalies = append(r.Anomalies, fmt.Sprintf(format, args...))
	}
}

// Verify stops the workload, waits until every running node stores the
// same partitions (catch-up, bounded by catchUp), checks them against the
// history, adds one final read per partition from the leader to the
// history and checks it for linearizability. It fails the test on any
// anomaly and returns the report.
func (w *Workload) Verify(t testing.TB, catchUp time.Duration) Report {
	t.Helper()
	w.Stop()
	caughtUpStart := time.Now()
	leader := w.h.WaitLeader(30 * time.Second)
	t.Logf("after the load: node %d leads (%v)", leader, time.Since(caughtUpStart).Round(time.Millisecond))
	var logs [][]uint64
	call := w.History.Now()
	deadline := time.Now().Add(catchUp)
	var err error
	// The leader's logs are final once two reads a second apart agree: a
	// write whose client gave up (outcome unknown) may still be applied
	// after the load stopped, when a forwarded request held up by a fault
	// reaches the partition's leader late.
	var prev [][]uint64
	for {
		logs, err = w.readAll(leader)
		if err == nil && prev != nil && equalLogs(prev, logs) || time.Now().After(deadline) {
			break
		}
		if err == nil {
			prev = logs
			time.Sleep(time.Second)
			continue
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("read back from leader node %d: %v", leader, err)
	}
	ret := w.History.Now()
	for p, l := range logs {
		w.History.Add(Op{Client: -1, Kind: Read, Partition: uint32(p), Log: l, Call: call, Return: ret, Outcome: OK, Node: leader, Final: true})
	}
	ops := w.History.Ops()
	r := checkLogs(ops, logs)
	// Every running node converges on the leader's logs; a node that does
	// not is reported on its own line, whatever else was found.
	for i := range w.h.N() {
		if i == leader || slices.Contains(w.h.Down(), i) {
			continue
		}
		var got [][]uint64
		var err error
		for {
			got, err = w.readAll(i)
			if err == nil && equalLogs(got, logs) {
				t.Logf("node %d holds the leader's logs %v after the load stopped", i, time.Since(caughtUpStart).Round(time.Millisecond))
				break
			}
			if time.Now().After(deadline) {
				r.Total++
				if err != nil {
					t.Errorf("anomaly: node %d not readable %v after the load stopped: %v", i, catchUp, err)
				} else {
					t.Errorf("anomaly: node %d differs from leader node %d %v after the load stopped: %s", i, leader, catchUp, diffLogs(got, logs))
				}
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if r.Total > 0 {
		// Say whether the leader itself moved on after its logs were
		// taken as final (a write applied late) or still answers them.
		if now, err := w.readAll(leader); err == nil && !equalLogs(now, logs) {
			t.Logf("leader node %d now differs from its final read: %s", leader, diffLogs(now, logs))
		} else if err == nil {
			t.Logf("leader node %d still answers its final read", leader)
		}
	}
	checkStart := time.Now()
	r.Linearizable = CheckLinearizable(ops)
	r.WritesLinearizable = r.Linearizable
	if r.Linearizable != porcupine.Ok {
		r.WritesLinearizable = CheckLinearizable(writesOnly(ops))
	}
	t.Logf("catch-up and read-back took %v, the linearizability check %v", checkStart.Sub(caughtUpStart).Round(time.Millisecond), time.Since(checkStart).Round(time.Millisecond))
	if r.WritesLinearizable != porcupine.Ok {
		r.anomaly("the appends (with the final reads) are not linearizable (porcupine: %v)", r.WritesLinearizable)
	}
	t.Logf("history: %v; stored per partition %v; appends of unknown outcome stored: %d; linearizable: %v (appends and final reads: %v)",
		r.Counts, r.Stored, r.UnknownStored, r.Linearizable, r.WritesLinearizable)
	for _, s := range r.StaleReads {
		t.Logf("finding (allowed by the contract, no linearizable reads): %s", s)
	}
	if r.Linearizable != porcupine.Ok && len(r.StaleReads) == 0 && r.WritesLinearizable == porcupine.Ok {
		r.anomaly("leader reads are not linearizable (porcupine: %v) although none missed an acknowledged append", r.Linearizable)
	}
	for _, a := range r.Anomalies {
		t.Errorf("anomaly: %s", a)
	}
	if r.Total > len(r.Anomalies) {
		t.Errorf("%d anomalies in all", r.Total)
	}
	return r
}

// checkLogs checks the stored logs (message ids by offset, per partition)
// against the recorded operations: every acknowledged append stored once,
// at its offset; appends of unknown outcome at most once; refused appends
// never; nothing that was not sent; each client's acknowledged appends in
// its order; no poll saw a gap in offsets; every any-node read a prefix of
// the final log.
func checkLogs(ops []Op, logs [][]uint64) Report {
	r := Report{Counts: Count(ops)}
	type sent struct {
		op    Op
		found int
	}
	byID := map[uint64]*sent{}
	for _, op := range ops {
		if errors.Is(op.Err, errOffsets) {
			r.anomaly("client %d read from node %d: %v", op.Client, op.Node, op.Err)
		}
		if op.Kind == Append {
			byID[op.MsgID] = &sent{op: op}
		}
	}
	for p, l := range logs {
		r.Stored = append(r.Stored, len(l))
		for off, id := range l {
			s, ok := byID[id]
			switch {
			case !ok:
				r.anomaly("partition %d offset %d holds %#x, which no client sent", p, off, id)
				continue
			case s.op.Partition != uint32(p):
				r.anomaly("partition %d offset %d holds %#x, sent to partition %d", p, off, id, s.op.Partition)
			}
			s.found++
			if s.found == 2 {
				r.anomaly("%#x (%v from client %d) stored twice, again at partition %d offset %d", id, s.op.Outcome, s.op.Client, p, off)
			}
			switch s.op.Outcome {
			case OK:
				if !s.op.Dup && s.op.Offset != uint64(off) {
					r.anomaly("%#x acknowledged at offset %d, stored at %d", id, s.op.Offset, off)
				}
			case Failed:
				r.anomaly("%#x was refused (code %d, %v) by node %d but is stored at partition %d offset %d", id, s.op.Code, s.op.Err, s.op.Node, p, off)
			case Unknown:
				if s.found == 1 {
					r.UnknownStored++
				}
			}
		}
	}
	r.staleReads(ops)
	for _, op := range ops {
		if (op.Kind != LocalRead && op.Kind != Read) || op.Outcome != OK || int(op.Partition) >= len(logs) {
			continue
		}
		final := logs[op.Partition]
		if len(op.Log) > len(final) {
			r.anomaly("node %d served %d messages of partition %d, more than the final log's %d", op.Node, len(op.Log), op.Partition, len(final))
			continue
		}
		for off, id := range op.Log {
			if final[off] != id {
				r.anomaly("node %d served %#x at partition %d offset %d, the final log holds %#x there", op.Node, id, op.Partition, off, final[off])
				break
			}
		}
	}
	lastOffset := map[[2]int]uint64{}
	for _, op := range ops {
		if op.Kind != Append || op.Outcome != OK {
			continue
		}
		s := byID[op.MsgID]
		if s.found == 0 && op.Dup {
			r.anomaly("%#x acknowledged as a duplicate by node %d after %d retries is not stored", op.MsgID, op.Node, op.Retries)
			continue
		}
		if op.Dup {
			continue
		}
		if s.found == 0 {
			there := "nothing"
			if l := logs[op.Partition]; op.Offset < uint64(len(l)) {
				there = fmt.Sprintf("%#x", l[op.Offset])
				if o, ok := byID[l[op.Offset]]; ok {
					there += fmt.Sprintf(" (%v by node %d)", o.op.Outcome, o.op.Node)
				}
			}
			r.anomaly("%#x acknowledged by node %d at partition %d offset %d is lost (that offset holds %s)", op.MsgID, op.Node, op.Partition, op.Offset, there)
		}
		key := [2]int{op.Client, int(op.Partition)}
		if prev, ok := lastOffset[key]; ok && op.Offset <= prev {
			r.anomaly("client %d: %#x acknowledged at offset %d after its earlier message at offset %d", op.Client, op.MsgID, op.Offset, prev)
		}
		lastOffset[key] = op.Offset
	}
	return r
}

// staleReads reports every leader read that missed an append
// acknowledged before the read began: the read names the precise
// operation porcupine cannot linearize.
func (r *Report) staleReads(ops []Op) {
	type ack struct {
		ret  int64
		off  uint64
		id   uint64
		node int
	}
	acks := map[uint32][]ack{}
	for _, op := range ops {
		if op.Kind == Append && op.Outcome == OK && !op.Dup {
			acks[op.Partition] = append(acks[op.Partition], ack{op.Return, op.Offset, op.MsgID, op.Node})
		}
	}
	// best[p][i] is the acknowledged append of the highest offset among
	// the first i+1 acknowledgements of partition p in time order.
	best := map[uint32][]ack{}
	for p, as := range acks {
		slices.SortFunc(as, func(a, b ack) int { return cmp.Compare(a.ret, b.ret) })
		run := make([]ack, len(as))
		for i, a := range as {
			run[i] = a
			if i > 0 && run[i-1].off > a.off {
				run[i] = run[i-1]
			}
		}
		acks[p], best[p] = as, run
	}
	for _, op := range ops {
		if op.Kind != Read || op.Outcome != OK || op.Final {
			continue
		}
		as := acks[op.Partition]
		n, _ := slices.BinarySearchFunc(as, op.Call, func(a ack, t int64) int { return cmp.Compare(a.ret, t) })
		if n == 0 {
			continue
		}
		b := best[op.Partition][n-1]
		if uint64(len(op.Log)) <= b.off {
			r.stale("stale read: client %d read partition %d from node %d (it reported itself leader) at %s and got %d messages; offset %d (%#x) had been acknowledged by node %d at %s, before the read began",
				op.Client, op.Partition, op.Node, ms(op.Call), len(op.Log), b.off, b.id, b.node, ms(b.ret))
		}
	}
}

// stale records a stale read.
func (r *Report) stale(format string, args ...any) {
	if len(r.StaleReads) < 10 {
		r.StaleReads = append(r.StaleReads, fmt.Sprintf(format, args...))
	}
}

// ms formats a history time.
func ms(t int64) string { return time.Duration(t).Round(time.Millisecond).String() }

// writesOnly returns ops without the reads other than the final ones.
func writesOnly(ops []Op) []Op {
	out := make([]Op, 0, len(ops))
	for _, op := range ops {
		if op.Kind == Append || op.Final {
			out = append(out, op)
		}
	}
	return out
}

func equalLogs(a, b [][]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// diffLogs describes the first difference between two sets of logs.
func diffLogs(got, want [][]uint64) string {
	for p := range want {
		if p >= len(got) {
			return fmt.Sprintf("partition %d missing", p)
		}
		g, w := got[p], want[p]
		for i := 0; i < len(g) && i < len(w); i++ {
			if g[i] != w[i] {
				return fmt.Sprintf("partition %d offset %d: %#x, leader %#x", p, i, g[i], w[i])
			}
		}
		if len(g) != len(w) {
			return fmt.Sprintf("partition %d: %d messages, leader %d", p, len(g), len(w))
		}
	}
	return "no difference"
}

// failoverTime returns the time from at (history clock) to the first
// acknowledged append invoked after it, or false when there is none.
func failoverTime(ops []Op, at int64) (time.Duration, bool) {
	best := int64(-1)
	for _, op := range ops {
		if op.Kind == Append && op.Outcome == OK && op.Call >= at && (best < 0 || op.Return < best) {
			best = op.Return
		}
	}
	if best < 0 {
		return 0, false
	}
	return time.Duration(best - at), true
}
