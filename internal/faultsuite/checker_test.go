//go:build !windows

package faultsuite

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// rec is a record whose payload checked out.
func rec(off, id uint64) Record { return Record{Offset: off, ID: id, PayloadOK: true} }

// kinds counts anomalies by kind.
func kinds(as []Anomaly) map[string]int {
	out := map[string]int{}
	for _, a := range as {
		out[a.Kind]++
	}
	return out
}

// cleanHistory is a history without anomalies: two sends, a poll, a
// store and a get, two members syncing disjoint partitions.
func cleanHistory() ([]Op, map[uint32]FinalLog) {
	ops := []Op{
		{Index: 0, Client: 1, Kind: KindSend, Partition: 0, Invoke: 0, Complete: 10, Type: TypeOK, PayloadID: 100, Offset: 0, HasOffset: true},
		{Index: 1, Client: 1, Kind: KindSend, Partition: 0, Invoke: 11, Complete: 20, Type: TypeOK, PayloadID: 101, Offset: 1, HasOffset: true},
		{Index: 2, Client: 1, Kind: KindSend, Partition: 0, Invoke: 21, Complete: 30, Type: TypeInfo, PayloadID: 102},
		{Index: 3, Client: 2, Kind: KindPoll, Partition: 0, Invoke: 31, Complete: 40, Type: TypeOK, Offset: 0, Records: []Record{rec(0, 100), rec(1, 101)}},
		{Index: 4, Client: 2, Kind: KindStore, Partition: 0, Invoke: 41, Complete: 50, Type: TypeOK, Offset: 1, Consumer: "r"},
		{Index: 5, Client: 2, Kind: KindGet, Partition: 0, Invoke: 51, Complete: 60, Type: TypeOK, Offset: 1, HasOffset: true, Consumer: "r"},
		{Index: 6, Client: 3, Kind: KindSync, Invoke: 0, Complete: 10, Type: TypeOK, Generation: 1, Partitions: []uint32{0}},
		{Index: 7, Client: 3, Kind: KindSync, Invoke: 100, Complete: 110, Type: TypeOK, Generation: 1, Partitions: []uint32{0}},
		{Index: 8, Client: 4, Kind: KindSync, Invoke: 0, Complete: 10, Type: TypeOK, Generation: 1, Partitions: []uint32{1}},
		{Index: 9, Client: 4, Kind: KindSync, Invoke: 100, Complete: 110, Type: TypeOK, Generation: 1, Partitions: []uint32{1}},
		// After a rebalance (generation 2) partition 0 moves to client 4.
		{Index: 10, Client: 3, Kind: KindSync, Invoke: 200, Complete: 210, Type: TypeOK, Generation: 2, Partitions: []uint32{1}},
		{Index: 11, Client: 4, Kind: KindSync, Invoke: 200, Complete: 210, Type: TypeOK, Generation: 2, Partitions: []uint32{0}},
		{Index: 12, Client: 4, Kind: KindSync, Invoke: 300, Complete: 310, Type: TypeOK, Generation: 2, Partitions: []uint32{0}},
	}
	final := map[uint32]FinalLog{0: {Records: []Record{rec(0, 100), rec(1, 101), rec(2, 102)}}}
	return ops, final
}

func TestCheckClean(t *testing.T) {
	ops, final := cleanHistory()
	if as := Check(ops, final, CheckerConfig{}); len(as) != 0 {
		t.Fatalf("anomalies in a clean history: %+v", as)
	}
}

// TestCheckFindsAnomalies changes the clean history one way at a time
// and expects exactly the matching anomaly.
func TestCheckFindsAnomalies(t *testing.T) {
	cases := []struct {
		name   string
		change func(ops []Op, final map[uint32]FinalLog) []Op
		want   string
	}{
		{"lost write", func(ops []Op, f map[uint32]FinalLog) []Op {
			f[0] = FinalLog{Records: []Record{rec(0, 100), rec(1, 102)}}
			ops[3].Records = ops[3].Records[:1]
			return ops
		}, AnomalyLost},
		{"duplicate", func(ops []Op, f map[uint32]FinalLog) []Op {
			f[0] = FinalLog{Records: append(f[0].Records, rec(3, 102))}
			return ops
		}, AnomalyDuplicate},
		{"gap", func(ops []Op, f map[uint32]FinalLog) []Op {
			f[0] = FinalLog{Records: []Record{rec(0, 100), rec(1, 101), rec(3, 102)}}
			return ops
		}, AnomalyFinalGap},
		{"wrong payload", func(ops []Op, f map[uint32]FinalLog) []Op {
			f[0].Records[2].PayloadOK = false
			return ops
		}, AnomalyWrongPayload},
		{"reordered", func(ops []Op, f map[uint32]FinalLog) []Op {
			f[0] = FinalLog{Records: []Record{rec(0, 100), rec(1, 102), rec(2, 101)}}
			ops[1].Offset = 2
			ops[3].Records = []Record{rec(0, 100), rec(1, 102)}
			return ops
		}, AnomalyReordered},
		{"failed visible", func(ops []Op, f map[uint32]FinalLog) []Op {
			ops[2].Type = TypeFail
			return ops
		}, AnomalyFailedVisible},
		{"poll skip", func(ops []Op, f map[uint32]FinalLog) []Op {
			ops[3].Records = []Record{rec(0, 100), rec(2, 102)}
			return ops
		}, AnomalyPollSkip},
		{"poll backward", func(ops []Op, f map[uint32]FinalLog) []Op {
			ops[3].Offset = 1
			return ops
		}, AnomalyPollBackward},
		{"divergent read", func(ops []Op, f map[uint32]FinalLog) []Op {
			ops[3].Records = []Record{rec(0, 100), rec(1, 999)}
			return ops
		}, AnomalyDivergentRead},
		{"offset backward", func(ops []Op, f map[uint32]FinalLog) []Op {
			ops[5].Offset = 0
			return ops
		}, AnomalyOffsetBack},
		{"same generation", func(ops []Op, f map[uint32]FinalLog) []Op {
			ops[8].Partitions = []uint32{0, 1}
			return ops
		}, AnomalyDoubleAssign},
		{"overlapping ownership", func(ops []Op, f map[uint32]FinalLog) []Op {
			// Client 4 is told it owns partition 0 at generation 2 while
			// client 3 still holds it at generation 1 from 10 to 250.
			ops[10].Invoke, ops[10].Complete, ops[10].Generation, ops[10].Partitions = 250, 260, 1, []uint32{0}
			return ops
		}, AnomalyDoubleAssign},
		{"unreadable", func(ops []Op, f map[uint32]FinalLog) []Op {
			fl := f[0]
			fl.Err = "poll failed"
			f[0] = fl
			return ops
		}, AnomalyUnreadable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, final := cleanHistory()
			ops = c.change(ops, final)
			got := kinds(Check(ops, final, CheckerConfig{}))
			if got[c.want] == 0 {
				t.Fatalf("want a %s anomaly, got %v", c.want, got)
			}
			for k := range got {
				if k != c.want {
					t.Errorf("unexpected %s anomaly besides %s: %v", k, c.want, got)
				}
			}
		})
	}
}

// TestGroupTolerance: an overlap within the tolerance is not reported.
func TestGroupTolerance(t *testing.T) {
	ops, final := cleanHistory()
	// Client 4 certainly owns partition 0 (generation 2) from 210; client
	// 3's generation-1 run is stretched to end at 215: 5 ns of overlap.
	ops[10].Invoke, ops[10].Complete, ops[10].Generation, ops[10].Partitions = 215, 220, 1, []uint32{0}
	if got := kinds(Check(ops, final, CheckerConfig{GroupTolerance: 10})); len(got) != 0 {
		t.Fatalf("overlap within tolerance reported: %v", got)
	}
	if got := kinds(Check(ops, final, CheckerConfig{GroupTolerance: 1})); got[AnomalyDoubleAssign] == 0 {
		t.Fatalf("overlap beyond tolerance not reported: %v", got)
	}
}

// TestScheduleFromSeed: a schedule depends on the seed alone, and
// corruption only hits the victims, a minority.
func TestScheduleFromSeed(t *testing.T) {
	p := scheduleParams{nodes: 5, kinds: AllFaultKinds(), steps: 200, minHold: time.Second, maxHold: 5 * time.Second,
		minGap: time.Second, maxGap: 2 * time.Second, netFault: true}
	a, b := newSchedule(42, p), newSchedule(42, p)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two schedules of one seed differ")
	}
	if reflect.DeepEqual(a, newSchedule(43, p)) {
		t.Fatal("schedules of seeds 42 and 43 are the same")
	}
	if len(a.Victims) != 2 {
		t.Fatalf("victims %v: want a minority of 2 of 5", a.Victims)
	}
	seen := map[FaultKind]int{}
	for _, st := range a.Steps {
		seen[st.Kind]++
		if st.Kind == FaultCorrupt && !containsInt(a.Victims, st.Nodes[0]) {
			t.Errorf("corruption of node %d, not a victim %v", st.Nodes[0], a.Victims)
		}
	}
	for _, k := range AllFaultKinds() {
		if seen[k] == 0 {
			t.Errorf("no %s step in 200", k)
		}
	}
	p.netFault = false
	for _, st := range newSchedule(42, p).Steps {
		if st.Kind == FaultPartition || st.Kind == FaultOneWay {
			t.Fatalf("partition step without network namespaces: %s", st)
		}
	}
}

func containsInt(s []int, v int) bool { return slices.Contains(s, v) }

// TestDamage: a flip changes exactly one bit of one file of the kind, a
// truncation shortens it; other kinds are untouched.
func TestDamage(t *testing.T) {
	dir := t.TempDir()
	seg := filepath.Join(dir, "streams", "1", "topics", "1-t", "partitions", "0", "00000000000000000000.log")
	raft := filepath.Join(dir, "streams", "1", "topics", "1-t", "partitions", "0", "raft", "00000001.log")
	for _, p := range []string{seg, raft} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 1000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if k, _ := classifyFile(seg); k != FileSegment {
		t.Fatalf("segment classified %q", k)
	}
	if k, _ := classifyFile(raft); k != FileRaftLog {
		t.Fatalf("raft log classified %q", k)
	}
	if k, ok := classifyFile(filepath.Join(dir, "logs", "iggy-server.log")); ok {
		t.Fatalf("the server log classified %q", k)
	}
	if k, _ := classifyFile(filepath.Join(dir, "cluster", "metadata", "00000001.log")); k != FileRaftLog {
		t.Fatalf("the metadata raft log classified %q", k)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	what, err := damage(dir, FileSegment, false, rng)
	if err != nil || what == "" {
		t.Fatalf("flip: %q %v", what, err)
	}
	b, _ := os.ReadFile(seg)
	bits := 0
	for _, c := range b {
		for ; c != 0; c &= c - 1 {
			bits++
		}
	}
	if bits != 1 {
		t.Fatalf("%d bits flipped, want 1 (%s)", bits, what)
	}
	if r, _ := os.ReadFile(raft); len(r) != 1000 || string(r) != string(make([]byte, 1000)) {
		t.Fatal("the raft log was touched by a segment flip")
	}
	if _, err := damage(dir, FileRaftLog, true, rng); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(raft); info.Size() >= 1000 {
		t.Fatalf("raft log not truncated: %d bytes", info.Size())
	}
	if what, err := damage(dir, FileSnapshot, false, rng); err != nil || what != "" {
		t.Fatalf("no snapshot file, yet %q %v", what, err)
	}
}
