package replication

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication/transport"
	"github.com/iggo-dev/iggo/wire"
)

// holdNet keeps what its node sends to a held destination instead of
// sending it (holder.take hands it over later); the rest goes out.
type holdNet struct {
	Network
	self NodeID
	h    *holder
}

func (n holdNet) Send(to NodeID, envs []transport.Envelope) {
	if n.h.keep(n.self, to, envs) {
		return
	}
	n.Network.Send(to, envs)
}

// holder is the shared state of a cluster's holdNets.
type holder struct {
	mu   sync.Mutex
	to   map[NodeID]bool
	kept map[NodeID][]inbound // by destination, in send order
}

func newHolder() *holder { return &holder{to: map[NodeID]bool{}, kept: map[NodeID][]inbound{}} }

func (h *holder) keep(from, to NodeID, envs []transport.Envelope) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.to[to] {
		return false
	}
	var raft []transport.Envelope
	for _, e := range envs {
		if e.Kind == transport.KindRaft && e.Msg != nil {
			e.Msg = proto.CloneOf(e.Msg)
			raft = append(raft, e)
		}
	}
	if len(raft) > 0 {
		h.kept[to] = append(h.kept[to], inbound{from: from, envs: raft})
	}
	return true
}

func (h *holder) hold(to NodeID, on bool) {
	h.mu.Lock()
	h.to[to] = on
	h.mu.Unlock()
}

// take returns the raft messages kept for to and forgets them.
func (h *holder) take(to NodeID) []inbound {
	h.mu.Lock()
	defer h.mu.Unlock()
	in := h.kept[to]
	delete(h.kept, to)
	return in
}

// keptApp reports whether a message append with entries was kept for to.
func (h *holder) keptApp(to NodeID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, in := range h.kept[to] {
		for _, e := range in.envs {
			if e.Msg.GetType() == raftpb.MsgApp && len(e.Msg.GetEntries()) > 0 {
				return true
			}
		}
	}
	return false
}

// TestReplacedProposalIsNotBound: a leader frozen (as by SIGSTOP) while
// the others elect a new leader admits a proposal when it resumes, then
// steps the new leader's append before its next Ready: raft steps down
// and replaces the unstored proposal with the new leader's entry at the
// same index. The proposal's caller must not be bound to that entry
// (which commits and applies, so the call would report success for a
// change that was lost): it learns the outcome is unknown (57), since
// the stale leader's own append of the entry still leaves for followers
// that may not have moved to the new term.
func TestReplacedProposalIsNotBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, h *Host) (any, error)
	}{
		{"ChangeMembership", func(ctx context.Context, h *Host) (any, error) {
			return h.ChangeMembership(ctx, 1, []MemberChange{{Type: AddLearner, Node: 3}})
		}},
		{"Propose", func(ctx context.Context, h *Host) (any, error) {
			return h.Propose(ctx, 1, []byte("lost"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				held := newHolder()
				c := newCluster(t, 3, 61, func(cfg *Config) {
					cfg.Network = holdNet{Network: cfg.Network, self: cfg.Self, h: held}
				})
				c.addGroup(1)
				if _, err := c.propose(1, []byte("before"), 10*time.Second); err != nil {
					t.Fatal(err)
				}
				c.waitApplied(1, c.ids, 1, 10*time.Second)
				old := c.leader(1, 5*time.Second)
				h := c.hosts[old]
				v0, _ := h.Status(1)
				oldTerm := v0.Term
				ctx := contextWithTimeout(t, 60*time.Second)

				// Freeze the leader's loop; what the others send it is
				// kept, so nothing waits in its inbox when it resumes.
				synctest.Wait()
				held.hold(old, true)
				frozen, thaw := make(chan struct{}), make(chan struct{})
				if err := h.do(ctx, func() { close(frozen); <-thaw }); err != nil {
					t.Fatal(err)
				}
				<-frozen

				// The others elect a new leader, which appends to the
				// frozen one (kept).
				var others []NodeID
				for _, id := range c.ids {
					if id != old {
						others = append(others, id)
					}
				}
				c.voters[1] = others // leader() counts the majority of these
				lead := c.leader(1, 30*time.Second)
				if v, _ := c.hosts[lead].Status(1); v.Term <= oldTerm {
					t.Fatalf("new leader %d at term %d, old term %d", lead, v.Term, oldTerm)
				}
				for deadline := time.Now().Add(10 * time.Second); !held.keptApp(old); time.Sleep(testTiming.Tick) {
					if time.Now().After(deadline) {
						t.Fatalf("new leader %d sent no append to %d", lead, old)
					}
				}
				c.voters[1] = c.ids

				// On resume the old leader's loop first admits the call
				// (raft still leads there), then steps what the others
				// sent, all before its next Ready. Blocked senders on the
				// loop's unbuffered request channel are served in order.
				res := make(chan error, 1)
				var got any
				go func() {
					var err error
					got, err = tc.call(ctx, h)
					res <- err
				}()
				synctest.Wait()
				kept := held.take(old)
				go func() {
					_ = h.do(ctx, func() {
						for _, in := range kept {
							h.receive(in)
						}
					})
				}()
				synctest.Wait()
				held.hold(old, false)
				close(thaw)

				err := <-res
				if err == nil {
					t.Fatalf("%s of a replaced proposal reported success (%v)", tc.name, got)
				}
				if !errors.Is(err, ErrOutcomeUnknown) {
					t.Fatalf("%s of a replaced proposal: %v, want %v", tc.name, err, ErrOutcomeUnknown)
				}
				if code, ok := Transient(err); !ok || code != wire.ErrTransientNotCommitted.Code {
					t.Fatalf("Transient(%v) = %d, %v; want 57", err, code, ok)
				}

				// The proposal is indeed lost: once the old leader caught
				// up, nothing of it was applied or configured anywhere.
				if _, err := c.propose(1, []byte("after"), 10*time.Second); err != nil {
					t.Fatal(err)
				}
				c.waitApplied(1, c.ids, 2, 10*time.Second)
				for _, e := range c.checkSame(1, c.ids) {
					if string(e.Data) == "lost" {
						t.Fatalf("the replaced proposal was applied at %d", e.Index)
					}
				}
				for _, id := range c.ids {
					if v, _ := c.hosts[id].Status(1); slices.Contains(v.Learners, 3) {
						t.Fatalf("node %d: the replaced membership change was applied: %+v", id, v)
					}
				}
			})
		})
	}
}
