//go:build !windows

package clustertest

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestLogModel checks the checker on small hand-written histories, so a
// pass of the real histories means something: each illegal history must
// be rejected.
func TestLogModel(t *testing.T) {
	app := func(client int, id uint64, off uint64, call, ret int64) Op {
		return Op{Client: client, Kind: Append, MsgID: id, Offset: off, Call: call, Return: ret, Outcome: OK}
	}
	unknown := func(client int, id uint64, call int64) Op {
		return Op{Client: client, Kind: Append, MsgID: id, Call: call, Return: call + 1, Outcome: Unknown}
	}
	read := func(client int, log []uint64, call, ret int64) Op {
		return Op{Client: client, Kind: Read, Log: log, Call: call, Return: ret, Outcome: OK}
	}
	final := func(log []uint64, call, ret int64) Op {
		return Op{Client: -1, Kind: Read, Log: log, Call: call, Return: ret, Outcome: OK, Final: true}
	}
	for _, tc := range []struct {
		name string
		ops  []Op
		want porcupine.CheckResult
	}{
		{"sequential appends and a read", []Op{app(0, 1, 0, 0, 1), app(0, 2, 1, 2, 3), read(1, []uint64{1, 2}, 4, 5)}, porcupine.Ok},
		{"concurrent appends in either order", []Op{app(0, 1, 1, 0, 10), app(1, 2, 0, 0, 10), read(2, []uint64{2, 1}, 11, 12)}, porcupine.Ok},
		{"offset gap", []Op{app(0, 1, 0, 0, 1), app(0, 2, 2, 2, 3)}, porcupine.Illegal},
		{"one offset twice", []Op{app(0, 1, 0, 0, 1), app(1, 2, 0, 2, 3)}, porcupine.Illegal},
		{"acknowledged append lost from a later read", []Op{app(0, 1, 0, 0, 1), app(0, 2, 1, 2, 3), read(1, []uint64{1}, 4, 5)}, porcupine.Illegal},
		{"read reorders", []Op{app(0, 1, 0, 0, 1), app(0, 2, 1, 2, 3), read(1, []uint64{2, 1}, 4, 5)}, porcupine.Illegal},
		{"read duplicates", []Op{app(0, 1, 0, 0, 1), read(1, []uint64{1, 1}, 4, 5)}, porcupine.Illegal},
		{"stale read after a newer read", []Op{app(0, 1, 0, 0, 1), app(0, 2, 1, 2, 3), read(1, []uint64{1, 2}, 4, 5), read(2, []uint64{1}, 6, 7)}, porcupine.Illegal},
		{"unknown append that happened", []Op{app(0, 1, 0, 0, 1), unknown(1, 9, 2), read(2, []uint64{1, 9}, 10, 11)}, porcupine.Ok},
		{"unknown append that never happened", []Op{app(0, 1, 0, 0, 1), unknown(1, 9, 2), read(2, []uint64{1}, 10, 11)}, porcupine.Ok},
		{"unknown append seen before its call", []Op{app(0, 1, 0, 0, 1), read(2, []uint64{1, 9}, 2, 3), unknown(1, 9, 5)}, porcupine.Illegal},
		{"unknown append takes the offset of a later acknowledged one", []Op{unknown(1, 9, 0), app(0, 1, 0, 5, 6), read(2, []uint64{9, 1}, 10, 11)}, porcupine.Illegal},
		{"failed append seen", []Op{{Client: 1, Kind: Append, MsgID: 9, Call: 0, Return: 1, Outcome: Failed}, read(2, []uint64{9}, 10, 11)}, porcupine.Illegal},
		{"unknown append resolved by the final read", []Op{app(0, 1, 0, 0, 1), unknown(1, 9, 2), unknown(1, 8, 3), final([]uint64{1, 8}, 10, 11)}, porcupine.Ok},
		{"unknown append the final read places before its call", []Op{app(0, 1, 1, 5, 6), unknown(1, 9, 7), final([]uint64{9, 1}, 10, 11)}, porcupine.Illegal},
		{"acknowledged append missing from the final read", []Op{app(0, 1, 0, 0, 1), unknown(1, 9, 2), final([]uint64{9}, 10, 11)}, porcupine.Illegal},
		{"partitions are independent", []Op{app(0, 1, 0, 0, 1), {Client: 1, Kind: Append, Partition: 1, MsgID: 2, Offset: 0, Call: 2, Return: 3, Outcome: OK}}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckLinearizable(tc.ops); got != tc.want {
				t.Fatalf("check = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCheckLogs checks the stored-log check on small cases: each defect
// must be reported, a clean case must not be.
func TestCheckLogs(t *testing.T) {
	ack := func(client int, id, off uint64) Op {
		return Op{Client: client, Kind: Append, MsgID: id, Offset: off, Outcome: OK}
	}
	other := func(client int, id uint64, o Outcome) Op {
		return Op{Client: client, Kind: Append, MsgID: id, Outcome: o}
	}
	local := func(node int, log ...uint64) Op {
		return Op{Client: 9, Kind: LocalRead, Node: node, Log: log, Outcome: OK}
	}
	for _, tc := range []struct {
		name  string
		ops   []Op
		log   []uint64
		wants int
	}{
		{"clean", []Op{ack(0, 1, 0), other(1, 7, Unknown), ack(0, 2, 2), other(1, 8, Unknown), other(1, 9, Failed), local(1, 1, 7)}, []uint64{1, 7, 2}, 0},
		{"acknowledged message lost", []Op{ack(0, 1, 0), ack(0, 2, 1)}, []uint64{1}, 1},
		{"acknowledged at another offset", []Op{ack(0, 1, 0), ack(1, 2, 1)}, []uint64{2, 1}, 2},
		{"stored twice (and so once off its offset)", []Op{ack(0, 1, 0)}, []uint64{1, 1}, 2},
		{"unknown stored twice", []Op{other(0, 7, Unknown)}, []uint64{7, 7}, 1},
		{"refused but stored", []Op{other(0, 9, Failed)}, []uint64{9}, 1},
		{"never sent", []Op{ack(0, 1, 0)}, []uint64{1, 42}, 1},
		{"client order reversed", []Op{ack(0, 1, 1), ack(0, 2, 0)}, []uint64{2, 1}, 1},
		{"follower served a divergent message", []Op{ack(0, 1, 0), local(2, 5)}, []uint64{1}, 1},
		{"follower served more than the log", []Op{ack(0, 1, 0), local(2, 1, 1)}, []uint64{1}, 1},
		{"offsets gap seen by a poll", []Op{{Client: 3, Kind: Read, Outcome: Failed, Err: errOffsets}}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkLogs(tc.ops, [][]uint64{tc.log})
			if r.Total != tc.wants {
				t.Fatalf("%d anomalies %q, want %d", r.Total, r.Anomalies, tc.wants)
			}
		})
	}
}

// TestStaleReads checks the stale-read finder.
func TestStaleReads(t *testing.T) {
	ack := Op{Client: 0, Kind: Append, MsgID: 1, Offset: 0, Call: 0, Return: 4, Outcome: OK}
	for _, tc := range []struct {
		name string
		read Op
		want int
	}{
		{"read after the ack misses it", Op{Client: 2, Kind: Read, Node: 1, Call: 5, Return: 6, Outcome: OK}, 1},
		{"read after the ack sees it", Op{Client: 2, Kind: Read, Node: 1, Log: []uint64{1}, Call: 5, Return: 6, Outcome: OK}, 0},
		{"read concurrent with the ack", Op{Client: 2, Kind: Read, Node: 1, Call: 3, Return: 6, Outcome: OK}, 0},
		{"any-node read may lag", Op{Client: 2, Kind: LocalRead, Node: 1, Call: 5, Return: 6, Outcome: OK}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			r.staleReads([]Op{ack, tc.read})
			if len(r.StaleReads) != tc.want {
				t.Fatalf("stale reads %q, want %d", r.StaleReads, tc.want)
			}
		})
	}
}
