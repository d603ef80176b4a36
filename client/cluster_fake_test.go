package client

import (
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// noLeader in a fakeCluster view means "reports no leader".
const noLeader = -1

// fakeCluster is a few fake nodes on 127.0.0.1 that answer like the nodes
// of a cluster (cluster-contract.md §2, §3): GET_CLUSTER_METADATA lists
// every node in order with the leader the answering node believes in;
// writes on a node that is not the leader get 58 (result-framed for
// metadata operations, header status for partition operations); logins
// and reads are served everywhere. Each node records its requests.
type fakeCluster struct {
	t     testing.TB
	nodes []*fakeServer

	mu     sync.Mutex
	addrs  []string // guarded by mu: node addresses, by index
	views  []int    // guarded by mu: the leader node i names, or noLeader
	leader int      // guarded by mu: the node that accepts writes, or noLeader
	// metaStatus, when non-zero for a node, is the header status its
	// metadata reads get instead of the metadata.
	metaStatus []uint32 // guarded by mu
	// hook, when set, answers first (returning true when it did).
	hook func(node int, c *fakeConn, r fakeReq) bool // guarded by mu
}

func newFakeCluster(t testing.TB, n, leader int) *fakeCluster {
	t.Helper()
	fc := &fakeCluster{t: t, views: make([]int, n), metaStatus: make([]uint32, n)}
	for i := range n {
		s := newFakeServer(t, func(c *fakeConn, r fakeReq) bool { return fc.handle(i, c, r) })
		fc.nodes = append(fc.nodes, s)
	}
	fc.mu.Lock()
	for _, s := range fc.nodes {
		fc.addrs = append(fc.addrs, s.Addr())
	}
	fc.mu.Unlock()
	fc.setLeader(leader)
	return fc
}

// addr returns node i's address.
func (fc *fakeCluster) addr(i int) string { return fc.nodes[i].Addr() }

// setLeader makes node i the leader, as every node reports it.
func (fc *fakeCluster) setLeader(i int) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.leader = i
	for j := range fc.views {
		fc.views[j] = i
	}
}

// setView makes node i report leader as the leader (without changing
// who accepts writes).
func (fc *fakeCluster) setView(i, leader int) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.views[i] = leader
}

// failMetadata makes node i answer metadata reads with status.
func (fc *fakeCluster) failMetadata(i int, status uint32) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.metaStatus[i] = status
}

// metadata is what node i answers to GET_CLUSTER_METADATA.
func (fc *fakeCluster) metadata(i int) wire.ClusterMetadata {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	md := wire.ClusterMetadata{Name: "fake-cluster"}
	for j, a := range fc.addrs {
		host, port, _ := net.SplitHostPort(a)
		p, _ := strconv.Atoi(port)
		n := wire.ClusterNode{Name: "node-" + strconv.Itoa(j), IP: host, TCPPort: uint16(p), Role: wire.ClusterFollower, Status: wire.ClusterNodeHealthy}
		if fc.views[i] == j {
			n.Role = wire.ClusterLeader
		}
		md.Nodes = append(md.Nodes, n)
	}
	return md
}

// setHook installs h (see fakeCluster.hook).
func (fc *fakeCluster) setHook(h func(node int, c *fakeConn, r fakeReq) bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.hook = h
}

func (fc *fakeCluster) handle(i int, c *fakeConn, r fakeReq) bool {
	fc.mu.Lock()
	hook := fc.hook
	fc.mu.Unlock()
	if hook != nil && hook(i, c, r) {
		return true
	}
	if r.Command() == wire.CmdGetClusterMetadata && r.Hdr.Operation == wire.OpNonReplicated {
		fc.mu.Lock()
		status := fc.metaStatus[i]
		fc.mu.Unlock()
		if status != 0 {
			c.reply(r, status, nil)
			return true
		}
		md := fc.metadata(i)
		c.reply(r, 0, md.AppendTo(nil))
		return true
	}
	fc.mu.Lock()
	leading := fc.leader == i
	fc.mu.Unlock()
	if leading {
		return false
	}
	switch op := r.Hdr.Operation; {
	case op.Metadata():
		info, _ := wire.CommandForOperation(op)
		c.replyOp(r, info.ReplyOperation, 0, wire.AppendResultError(nil, wire.ErrTransientNotAccepted.Code))
		return true
	case op == wire.OpSendMessages || op == wire.OpStoreConsumerOffset || op == wire.OpDeleteConsumerOffset:
		c.reply(r, wire.ErrTransientNotAccepted.Code, nil)
		return true
	}
	return false
}

// ops returns node i's requests with operation op (every command when op
// is 0, Register included).
func (fc *fakeCluster) ops(i int, op wire.Operation) []fakeReq {
	var out []fakeReq
	for _, r := range fc.nodes[i].requests() {
		if op == 0 || r.Hdr.Operation == op {
			out = append(out, r)
		}
	}
	return out
}

// commands returns node i's requests of command code (Register is
// wire.CmdLoginRegister).
func (fc *fakeCluster) commands(i int, code wire.Command) []fakeReq {
	var out []fakeReq
	for _, r := range fc.nodes[i].requests() {
		if r.Command() == code {
			out = append(out, r)
		}
	}
	return out
}

// kill closes node i's listener and connections: it stops answering and
// refuses new connections, like a crashed server.
func (s *fakeServer) kill() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
}

// clusterOpts are the options of the cluster tests: leader following on,
// with short failover and leaderless intervals, fast retries, and a debug
// log in logs.
func clusterOpts(logs *testutil.SyncBuffer) []Option {
	return []Option{
		WithCredentials("iggy", "iggy"),
		WithReconnect(ReconnectPolicy{InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}),
		WithTransientRetry(RetryPolicy{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 5 * time.Millisecond}),
		WithHeartbeat(0),
		WithClusterPolicy(ClusterPolicy{FailoverCheck: 200 * time.Millisecond, LeaderlessWait: 300 * time.Millisecond, LeaderlessPoll: 50 * time.Millisecond}),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
}

// dialCluster dials addr (one address or a comma-separated list) with
// clusterOpts and then opts.
func dialCluster(t testing.TB, addr string, logs *testutil.SyncBuffer, opts ...Option) *Client {
	t.Helper()
	c, err := Dial(ctxTimeout(t), addr, append(clusterOpts(logs), opts...)...)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// deadAddr returns a 127.0.0.1 address nothing listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}
