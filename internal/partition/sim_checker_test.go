package partition

import (
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/replication"
)

// TestSimChecker feeds the simulation's checker made-up replicas and
// client histories: it must flag each kind of anomaly, and only those.
func TestSimChecker(t *testing.T) {
	const seed = 1
	msg := func(off uint64, client int, req uint64, i int) simMsg {
		p := simPayload(seed, client, req, i)
		return simMsg{offset: off, payload: p, digest: uint64(len(p)) + off}
	}
	write := func(client int, req uint64, n int, acked bool, base int64) *simWrite {
		w := &simWrite{client: client, request: req, acked: acked, base: base}
		for i := range n {
			w.payloads = append(w.payloads, simPayload(seed, client, req, i))
		}
		return w
	}
	// good: c0 r1 (2 messages) at 0, c1 r1 (1 message) at 2.
	good := []simMsg{msg(0, 0, 1, 0), msg(1, 0, 1, 1), msg(2, 1, 1, 0)}
	goodWrites := []*simWrite{write(0, 1, 2, true, 0), write(1, 1, 1, true, -1)}
	for _, tc := range []struct {
		name   string
		seqs   map[replication.NodeID][]simMsg
		writes []*simWrite
		seen   map[string]uint64
		want   string // "" when no anomaly is expected
	}{
		{name: "agreeing replicas", seqs: map[replication.NodeID][]simMsg{0: good, 1: good, 2: good[:2]}, writes: goodWrites},
		{name: "lost acknowledged write",
			seqs:   map[replication.NodeID][]simMsg{0: good[:2], 1: good[:2]},
			writes: goodWrites, want: "lost acknowledged write: c1 r1"},
		{name: "divergence",
			seqs:   map[replication.NodeID][]simMsg{0: good, 1: {good[0], good[1], {offset: 2, payload: good[2].payload, digest: 99}}},
			writes: goodWrites, want: "divergence: offset 2"},
		{name: "duplicate",
			seqs:   map[replication.NodeID][]simMsg{0: append(good[:3:3], msg(3, 1, 1, 0))},
			writes: goodWrites, want: "duplicate"},
		{name: "gap",
			seqs:   map[replication.NodeID][]simMsg{0: {good[0], good[1], msg(3, 1, 1, 0)}},
			writes: goodWrites, want: "offset gap on n0: 1 then 3"},
		{name: "wrong base",
			seqs:   map[replication.NodeID][]simMsg{0: good},
			writes: []*simWrite{write(0, 1, 2, true, 1), goodWrites[1]}, want: "acknowledged at base 1, stored at 0"},
		{name: "unacknowledged partly stored",
			seqs:   map[replication.NodeID][]simMsg{0: {good[0], good[2]}},
			writes: []*simWrite{write(0, 1, 2, false, -1), goodWrites[1]}, want: "partly stored"},
		{name: "deleted with its segment on every replica",
			seqs:   map[replication.NodeID][]simMsg{0: good[2:], 1: good[2:]},
			writes: goodWrites, seen: map[string]uint64{good[0].payload: 0, good[1].payload: 1}},
		{name: "deleted on one replica, beyond the end of the other",
			seqs:   map[replication.NodeID][]simMsg{0: good[2:], 1: good[:1]},
			writes: goodWrites, seen: map[string]uint64{good[0].payload: 0, good[1].payload: 1},
			want: "acknowledged write unreachable: c0 r1"},
		{name: "missing though above a replica's first offset",
			seqs:   map[replication.NodeID][]simMsg{0: good[2:], 1: {msg(1, 9, 9, 0), good[2]}},
			writes: goodWrites, seen: map[string]uint64{good[0].payload: 0, good[1].payload: 1},
			want: "lost acknowledged write: c0 r1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &simRun{t: t, seed: seed, tr: newSimTrace(), writes: tc.writes, seen: tc.seen}
			if r.seen == nil {
				r.seen = map[string]uint64{}
			}
			var members []replication.NodeID
			for id := range simNodes {
				if _, ok := tc.seqs[replication.NodeID(id)]; ok {
					members = append(members, replication.NodeID(id))
				}
			}
			var res simResult
			r.verify(members, tc.seqs, &res)
			got := strings.Join(r.anomalies, "\n")
			switch {
			case tc.want == "" && got != "":
				t.Fatalf("unexpected anomalies:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("want an anomaly containing %q, got:\n%s", tc.want, got)
			}
		})
	}
}
