package replication

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// stallNet models TCP connections over a link that stops carrying packets
// without failing: what a host writes to a stalled peer is neither
// delivered nor reported lost, it waits in the "socket" and arrives when
// the link comes back (TCP retransmits it), unless the connection was
// reset meanwhile (Resetter), which discards it.
type stallNet struct {
	mu      sync.Mutex
	stalled map[[2]NodeID]bool
	held    map[[2]NodeID][]transport.Envelope
	inner   map[NodeID]Network
	resets  int
}

type stallEndpoint struct {
	s    *stallNet
	self NodeID
}

func (e stallEndpoint) Send(to NodeID, envs []transport.Envelope) {
	s := e.s
	s.mu.Lock()
	link := [2]NodeID{e.self, to}
	if s.stalled[link] {
		s.held[link] = append(s.held[link], envs...)
		s.mu.Unlock()
		return
	}
	in := s.inner[e.self]
	s.mu.Unlock()
	in.Send(to, envs)
}

// Reset discards what waits for to, as an aborted connection does.
func (e stallEndpoint) Reset(to NodeID) {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	delete(e.s.held, [2]NodeID{e.self, to})
	e.s.resets++
}

// stall stops (on) or restores the links between a and b; restored, the
// envelopes still held are delivered, in order.
func (s *stallNet) stall(a, b NodeID, on bool) {
	s.mu.Lock()
	type flush struct {
		from, to NodeID
		envs     []transport.Envelope
	}
	var out []flush
	for _, l := range [][2]NodeID{{a, b}, {b, a}} {
		s.stalled[l] = on
		if !on && len(s.held[l]) > 0 {
			out = append(out, flush{l[0], l[1], s.held[l]})
			delete(s.held, l)
		}
	}
	s.mu.Unlock()
	for _, f := range out {
		s.inner[f.from].Send(f.to, f.envs)
	}
}

// TestDeadPeerCallNotDeliveredLate: a call written to a peer whose link
// stalled fails once the peer is declared dead (ErrCallLost), and its
// request must not reach the peer when the link comes back: the host
// resets the connection to a peer it declares dead. Without the reset
// the stale request ran on the callee seconds later (with a fresh
// timeout), so a forwarded write whose client and forwarding node had
// both given up was applied long after, behind a settled read.
func TestDeadPeerCallNotDeliveredLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stallNet{stalled: map[[2]NodeID]bool{}, held: map[[2]NodeID][]transport.Envelope{}, inner: map[NodeID]Network{}}
		c := newCluster(t, 3, 1, func(cfg *Config) {
			s.mu.Lock()
			s.inner[cfg.Self] = cfg.Network
			s.mu.Unlock()
			cfg.Network = stallEndpoint{s, cfg.Self}
		})
		c.net.set(func(n *memNet) { n.inOrder = true })
		var ran atomic.Int32
		c.hosts[1].HandleCall(kindEcho, func(ctx context.Context, from NodeID, p []byte) ([]byte, error) {
			ran.Add(1)
			return p, nil
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.hosts[0].Call(ctx, 1, kindEcho, []byte("before")); err != nil {
			t.Fatal(err)
		}
		ran.Store(0)

		s.stall(0, 1, true)
		_, err := c.hosts[0].Call(ctx, 1, kindEcho, []byte("stalled"))
		if !errors.Is(err, ErrCallLost) {
			t.Fatalf("call over a stalled link: %v, want ErrCallLost once the peer is declared dead", err)
		}
		time.Sleep(5 * time.Second)
		s.stall(0, 1, false)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := ran.Load(); n != 0 {
			t.Fatalf("the failed call ran on the peer %d time(s) after the link came back", n)
		}
		s.mu.Lock()
		resets := s.resets
		s.mu.Unlock()
		if resets == 0 {
			t.Fatal("no connection reset when the peer was declared dead")
		}
		// The pair talks again.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel2()
		if got, err := c.hosts[0].Call(ctx2, 1, kindEcho, []byte("after")); err != nil || string(got) != "after" {
			t.Fatalf("call after the link came back: %q %v", got, err)
		}
	})
}
