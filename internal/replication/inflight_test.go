package replication

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

func TestMaxInflightBytesDefaults(t *testing.T) {
	base := Config{Timing: testTiming, Network: newMemNet(1).endpoint(0), Logger: testLogger()}
	for _, tc := range []struct {
		size, inflight, want uint64
	}{
		{0, 0, DefaultMaxInflightBytes},
		{64 << 20, 0, 64 << 20},
		{0, 4 << 20, 4 << 20},
	} {
		cfg := base
		cfg.MaxSizePerMsg, cfg.MaxInflightBytes = tc.size, tc.inflight
		h, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := h.cfg.MaxInflightBytes
		h.Close()
		if got != tc.want {
			t.Errorf("MaxSizePerMsg %d, MaxInflightBytes %d: got %d, want %d", tc.size, tc.inflight, got, tc.want)
		}
	}
	cfg := base
	cfg.MaxSizePerMsg, cfg.MaxInflightBytes = 2<<20, 1<<20
	if h, err := New(cfg); err == nil {
		h.Close()
		t.Fatal("MaxInflightBytes below MaxSizePerMsg must be refused")
	}
}

// burstNet records the most entry bytes one Send carried to watch.
type burstNet struct {
	Network
	watch NodeID
	mu    *sync.Mutex
	most  *int
}

func (n burstNet) Send(to NodeID, envs []transport.Envelope) {
	if to == n.watch {
		sum := 0
		for _, e := range envs {
			if e.Msg.GetType() == raftpb.MsgApp {
				for _, en := range e.Msg.GetEntries() {
					sum += len(en.GetData())
				}
			}
		}
		n.mu.Lock()
		*n.most = max(*n.most, sum)
		n.mu.Unlock()
	}
	n.Network.Send(to, envs)
}

// TestMaxInflightBytesBoundsCatchUp: a new member that reads the whole
// log receives it in bursts no larger than MaxInflightBytes (plus the one
// message raft lets cross the limit), not MaxInflightMsgs messages at
// once.
func TestMaxInflightBytesBoundsCatchUp(t *testing.T) {
	const entry, perMsg, inflight = 10 << 10, 10 << 10, 40 << 10
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		most := 0
		c := newCluster(t, 3, 41, func(cfg *Config) {
			cfg.MaxSizePerMsg, cfg.MaxInflightBytes = perMsg, inflight
			cfg.Network = burstNet{Network: cfg.Network, watch: 3, mu: &mu, most: &most}
		})
		// In order, as the transport delivers: a reordering network makes
		// raft reject, probe and reset the window over and over.
		c.net.set(func(n *memNet) { n.inOrder = true })
		c.addGroup(1)
		lead := c.leader(1, 5*time.Second)
		ctx := context.Background()
		for i := range 60 {
			d := bytes.Repeat([]byte{byte(i)}, entry)
			if _, err := c.hosts[lead].Propose(ctx, 1, d); err != nil {
				t.Fatal(err)
			}
		}
		c.start(3)
		c.addGroupOn(3, 1, GroupOptions{})
		if _, err := c.hosts[lead].ChangeMembership(ctx, 1, []MemberChange{{AddLearner, 3}}); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 60, 20*time.Second)
		c.checkSame(1, c.ids)
		mu.Lock()
		defer mu.Unlock()
		if most == 0 || most > inflight+entry {
			t.Fatalf("largest burst to the new member: %d bytes of entries, limit %d", most, inflight)
		}
		t.Logf("largest burst %d bytes (limit %d)", most, inflight)
	})
}
