package groups

import (
	"testing"
	"time"
)

const (
	benchPartitions = 1000
	benchMembers    = 100
)

// benchGroup returns a group over benchPartitions partitions with members
// joined one by one (clients 1..members); with inFlight every partition has
// been polled and not committed before each join, so joins create pending
// revocations.
func benchGroup(b *testing.B, members int, inFlight bool) *Group {
	b.Helper()
	g, err := New(Config{}, ids(0, benchPartitions))
	if err != nil {
		b.Fatal(err)
	}
	for c := 1; c <= members; c++ {
		if inFlight {
			g.ExpireRevocations(t0.Add(time.Hour))
			for _, m := range g.Members() {
				for _, p := range m.Partitions {
					if err := g.RecordPoll(m.Client, p, 1); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		if _, err := g.Join(cid(uint64(c)), t0); err != nil {
			b.Fatal(err)
		}
	}
	return g
}

// BenchmarkFullRebalance: a full rebalance of 1000 partitions over 100 members
// (what leave, disconnect and partition changes cost).
func BenchmarkFullRebalance(b *testing.B) {
	g := benchGroup(b, benchMembers, false)
	parts := g.Partitions()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.SetPartitions(parts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchPartitions)*float64(b.N)/b.Elapsed().Seconds(), "partitions/s")
}

// BenchmarkJoin: the cooperative join of the 100th member to a group of 99
// over 1000 partitions, without and with in-flight data.
func BenchmarkJoin(b *testing.B) {
	for _, bc := range []struct {
		name     string
		inFlight bool
	}{{"settled", false}, {"in-flight", true}} {
		b.Run(bc.name, func(b *testing.B) {
			snap := benchGroup(b, benchMembers-1, bc.inFlight).AppendTo(nil)
			g, err := New(Config{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := g.Decode(snap); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := g.Join(cid(benchMembers), t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJoinLeave: one member joins a group of 99 over 1000 partitions
// and leaves again (cooperative join + full rebalance).
func BenchmarkJoinLeave(b *testing.B) {
	g := benchGroup(b, benchMembers-1, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.Join(cid(benchMembers), t0); err != nil {
			b.Fatal(err)
		}
		if err := g.Leave(cid(benchMembers)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanPoll: the per-poll fence check (hot path: no allocations).
func BenchmarkCanPoll(b *testing.B) {
	g := benchGroup(b, benchMembers, false)
	m := g.Members()[benchMembers/2]
	p := m.Partitions[len(m.Partitions)-1]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.CanPoll(m.Client, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordPollCommit: the in-flight bookkeeping of one auto-committed
// poll.
func BenchmarkRecordPollCommit(b *testing.B) {
	g := benchGroup(b, benchMembers, false)
	m := g.Members()[benchMembers/2]
	p := m.Partitions[0]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.RecordPoll(m.Client, p, uint64(i)); err != nil {
			b.Fatal(err)
		}
		if err := g.RecordCommit(m.Client, p, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot: encoding and decoding a 100-member, 1000-partition group.
func BenchmarkSnapshot(b *testing.B) {
	g := benchGroup(b, benchMembers, true)
	buf := g.AppendTo(nil)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(buf)))
		for i := 0; i < b.N; i++ {
			buf = g.AppendTo(buf[:0])
		}
	})
	b.Run("decode", func(b *testing.B) {
		h, err := New(Config{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(buf)))
		for i := 0; i < b.N; i++ {
			if err := h.Decode(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
