package replication

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// tcpNode is one host joined to the others by the real replica transport
// on loopback.
type tcpNode struct {
	h  *Host
	tr *transport.Transport
	sm *recordSM
}

// tcpCluster is a set of tcpNodes; stop and restart simulate crashes.
type tcpCluster struct {
	t      *testing.T
	ids    []NodeID
	nodes  map[NodeID]*tcpNode
	addrs  map[NodeID]string
	mutate func(*Config)
}

// newTCPCluster starts n hosts with real transports and waits until every
// pair is connected.
func newTCPCluster(t *testing.T, n int, mutate func(*Config)) *tcpCluster {
	t.Helper()
	c := &tcpCluster{t: t, nodes: map[NodeID]*tcpNode{}, addrs: map[NodeID]string{}, mutate: mutate}
	for i := range n {
		c.ids = append(c.ids, NodeID(i))
	}
	for _, id := range c.ids {
		c.nodes[id] = c.newNode(id, "127.0.0.1:0")
		c.addrs[id] = c.nodes[id].tr.Addr().String()
	}
	for _, id := range c.ids {
		for _, p := range c.ids {
			if p != id {
				c.nodes[id].tr.AddPeer(p, c.addrs[p])
			}
		}
		c.nodes[id].tr.Start()
	}
	t.Cleanup(func() {
		for _, id := range c.ids {
			c.stop(id)
		}
	})
	c.waitConnected()
	return c
}

func (c *tcpCluster) newNode(id NodeID, addr string) *tcpNode {
	c.t.Helper()
	netw := &lateNetwork{}
	cfg := Config{Self: id, Peers: c.ids, Timing: testTiming,
		Network: netw, Logger: testLogger()}
	if c.mutate != nil {
		c.mutate(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	var tr *transport.Transport
	deadline := time.Now().Add(5 * time.Second)
	for {
		tr, err = transport.New(transport.Config{
			ClusterName: "calls", Self: id, ListenAddr: addr, Secret: []byte("0123456789abcdef0123456789abcdef"),
			Logger: testLogger(), BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		}, h)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the old listener's port is still closing
	}
	if err != nil {
		h.Close()
		c.t.Fatal(err)
	}
	netw.t.Store(tr)
	return &tcpNode{h: h, tr: tr, sm: newRecordSM()}
}

// stop closes node id's transport first (its peers see the connection
// drop, as after a crash), then its host.
func (c *tcpCluster) stop(id NodeID) {
	n := c.nodes[id]
	if n == nil {
		return
	}
	delete(c.nodes, id)
	n.tr.Close()
	n.h.Close()
}

// restart starts node id again on its old address.
func (c *tcpCluster) restart(id NodeID) *tcpNode {
	c.t.Helper()
	n := c.newNode(id, c.addrs[id])
	for _, p := range c.ids {
		if p != id {
			n.tr.AddPeer(p, c.addrs[p])
		}
	}
	n.tr.Start()
	c.nodes[id] = n
	c.waitConnected()
	return n
}

// waitConnected waits until every pair of running nodes is connected.
func (c *tcpCluster) waitConnected() {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := true
		for id, n := range c.nodes {
			for p := range c.nodes {
				if p != id && !n.tr.Connected(p) {
					ok = false
				}
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatal("replica connections did not come up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eventually polls cond until it holds or within passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
