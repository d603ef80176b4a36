package replication

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// syncRec watches deferred syncs: what each (node, group) log holds
// durably, how many syncs ran and at most at once, and every
// acknowledgement that promised more than was durable when it left.
type syncRec struct {
	mu          sync.Mutex
	durable     map[[2]uint64]uint64
	inFlight    int
	maxInFlight int
	syncs       int
	violations  []string
}

// deferLog is a LogStorage with DeferredSync whose sync takes a
// millisecond (virtual time) and only then counts the entries durable.
type deferLog struct {
	LogStorage
	rec  *syncRec
	key  [2]uint64
	sync time.Duration
}

func (l *deferLog) durableTo(last uint64) {
	l.rec.mu.Lock()
	l.rec.durable[l.key] = max(l.rec.durable[l.key], last)
	l.rec.mu.Unlock()
}

func (l *deferLog) Append(ents []*raftpb.Entry) error {
	if err := l.LogStorage.Append(ents); err != nil {
		return err
	}
	if len(ents) > 0 {
		l.durableTo(ents[len(ents)-1].GetIndex())
	}
	return nil
}

func (l *deferLog) AppendDeferred(ents []*raftpb.Entry) (func() error, error) {
	if err := l.LogStorage.Append(ents); err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, nil
	}
	last := ents[len(ents)-1].GetIndex()
	return func() error {
		r := l.rec
		r.mu.Lock()
		r.inFlight++
		r.syncs++
		r.maxInFlight = max(r.maxInFlight, r.inFlight)
		r.mu.Unlock()
		time.Sleep(l.sync)
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
		l.durableTo(last)
		return nil
	}, nil
}

// see records the acknowledgements node self sends (a tapNet's see).
func (r *syncRec) see(self NodeID, envs []transport.Envelope) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range envs {
		m := e.Msg
		if e.Kind != transport.KindRaft || m == nil || m.GetType() != raftpb.MsgAppResp || m.GetReject() {
			continue
		}
		if d := r.durable[[2]uint64{uint64(self), e.Group}]; m.GetIndex() > d {
			r.violations = append(r.violations, fmt.Sprintf("node %d group %d acknowledged %d, durable up to %d", self, e.Group, m.GetIndex(), d))
		}
	}
}

// TestDeferredSyncsRunTogether: with storages that defer their fsync, the
// syncs of the groups ready in one pass overlap instead of running one
// after another, no acknowledgement leaves before its entries are
// durable, and every group commits the same entries everywhere.
func TestDeferredSyncsRunTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &syncRec{durable: map[[2]uint64]uint64{}}
		c := newCluster(t, 3, 31, func(cfg *Config) {
			cfg.Network = tapNet{Network: cfg.Network, self: cfg.Self, see: rec.see}
		})
		const groups = 6
		for g := GroupID(1); g <= groups; g++ {
			c.voters[g] = c.ids
			for _, id := range c.ids {
				c.addGroupOn(id, g, GroupOptions{Voters: c.ids, Storage: &deferLog{
					LogStorage: NewMemoryLog(), rec: rec, key: [2]uint64{uint64(id), uint64(g)}, sync: time.Millisecond,
				}})
			}
		}
		// Spread the leaders, so that every node both leads (and sends
		// early) and follows (and acknowledges) in one pass.
		for g := GroupID(1); g <= groups; g++ {
			lead, want := c.leader(g, 5*time.Second), NodeID(int(g)%len(c.ids))
			if lead != want {
				if err := c.hosts[lead].TransferLeadership(context.Background(), g, want); err != nil {
					t.Fatal(err)
				}
			}
			for c.leader(g, 5*time.Second) != want {
				time.Sleep(testTiming.Tick)
			}
		}
		var wg sync.WaitGroup
		for g := GroupID(1); g <= groups; g++ {
			lead := c.leader(g, 5*time.Second)
			wg.Go(func() {
				for i := range 20 {
					if _, err := c.hosts[lead].Propose(context.Background(), g, fmt.Appendf(nil, "g%d-%d", g, i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		for g := GroupID(1); g <= groups; g++ {
			c.waitApplied(g, c.ids, 20, 10*time.Second)
			c.checkSame(g, c.ids)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.violations) > 0 {
			t.Fatalf("acknowledgements before their entries were durable:\n%v", rec.violations)
		}
		if rec.syncs == 0 || rec.maxInFlight < 2 {
			t.Fatalf("%d deferred syncs, at most %d at once; want several at once", rec.syncs, rec.maxInFlight)
		}
		t.Logf("%d deferred syncs, up to %d at once", rec.syncs, rec.maxInFlight)
	})
}
