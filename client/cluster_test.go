package client

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// wantRedirectLog checks that the debug log has a "following cluster
// leader" line from one address to another.
func wantRedirectLog(t *testing.T, logs *testutil.SyncBuffer, from, to string) {
	t.Helper()
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, `msg="following cluster leader"`) && strings.Contains(line, "from="+from) && strings.Contains(line, "to="+to) {
			return
		}
	}
	t.Fatalf("no redirect %s -> %s logged:\n%s", from, to, logs.String())
}

// onlyRequest returns the single request of code on node i.
func onlyRequest(t *testing.T, fc *fakeCluster, i int, code wire.Command) fakeReq {
	t.Helper()
	rs := fc.commands(i, code)
	if len(rs) != 1 {
		t.Fatalf("node %d: %d %v requests, want 1", i, len(rs), code)
	}
	return rs[0]
}

// TestClusterLeaderRedirect: a login on a follower is followed by a move
// to the leader the metadata names, logging in there with the same client
// id; request numbers continue across the move; an explicit Login
// re-checks and moves again.
func TestClusterLeaderRedirect(t *testing.T) {
	fc := newFakeCluster(t, 3, 2)
	var logs testutil.SyncBuffer
	c := dialCluster(t, fc.addr(0), &logs)
	ctx := ctxTimeout(t)
	if c.Addr() != fc.addr(2) {
		t.Fatalf("client on %s, want the leader %s", c.Addr(), fc.addr(2))
	}
	for _, i := range []int{0, 2} {
		if reg := onlyRequest(t, fc, i, wire.CmdLoginRegister); reg.Hdr.Client != c.ID() || reg.Hdr.Request != 0 {
			t.Fatalf("node %d login: client %v request %d", i, reg.Hdr.Client, reg.Hdr.Request)
		}
		onlyRequest(t, fc, i, wire.CmdGetClusterMetadata)
	}
	if n := len(fc.ops(1, 0)); n != 0 {
		t.Fatalf("node 1 got %d requests", n)
	}
	wantRedirectLog(t, &logs, fc.addr(0), fc.addr(2))

	if err := c.DeleteStream(ctx, wire.NumericID(1)); err != nil {
		t.Fatal(err)
	}
	if del := onlyRequest(t, fc, 2, wire.CmdDeleteStream); del.Hdr.Request != 1 || del.Hdr.Client != c.ID() {
		t.Fatalf("delete on the leader: request %d client %v", del.Hdr.Request, del.Hdr.Client)
	}

	// The leader moves to node 1; a Login re-checks and follows it.
	fc.setLeader(1)
	r, err := c.Login(ctx, "iggy", "iggy")
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr() != fc.addr(1) {
		t.Fatalf("after Login the client is on %s, want %s", c.Addr(), fc.addr(1))
	}
	if reg := onlyRequest(t, fc, 1, wire.CmdLoginRegister); reg.Hdr.Client != c.ID() {
		t.Fatal("login on the new leader under another client id")
	}
	if r.Session != c.Session() || r.Session != 1 {
		t.Fatalf("Login returned session %d, client has %d, want node 1's first epoch", r.Session, c.Session())
	}
	wantRedirectLog(t, &logs, fc.addr(2), fc.addr(1))
	if err := c.DeleteStream(ctx, wire.NumericID(1)); err != nil {
		t.Fatal(err)
	}
	if del := onlyRequest(t, fc, 1, wire.CmdDeleteStream); del.Hdr.Request != 2 || del.Hdr.Client != c.ID() {
		t.Fatalf("delete on the new leader: request %d client %v, want 2 and the same id", del.Hdr.Request, del.Hdr.Client)
	}
}

// TestClusterLeaderNoRedirect: a single-node reply never moves the client,
// even when it names another address; a leader at the dialed address
// written differently (localhost vs 127.0.0.1) is the same node; leader
// following can be turned off.
func TestClusterLeaderNoRedirect(t *testing.T) {
	t.Run("single node", func(t *testing.T) {
		s := newFakeServer(t, func(c *fakeConn, r fakeReq) bool {
			if r.Command() != wire.CmdGetClusterMetadata || r.Hdr.Operation != wire.OpNonReplicated {
				return false
			}
			md := wire.ClusterMetadata{Name: "single-node", Nodes: []wire.ClusterNode{{Name: "iggy-node", IP: "10.255.255.1", TCPPort: 1}}}
			c.reply(r, 0, md.AppendTo(nil))
			return true
		})
		var logs testutil.SyncBuffer
		c := dialCluster(t, s.Addr(), &logs)
		if c.Addr() != s.Addr() || len(s.requests()) != 2 {
			t.Fatalf("client on %s after %d requests", c.Addr(), len(s.requests()))
		}
		if strings.Contains(logs.String(), "following cluster leader") {
			t.Fatal("redirect logged")
		}
		c.mu.Lock()
		roster := c.roster
		c.mu.Unlock()
		if len(roster) != 0 {
			t.Fatalf("a single node taught the roster %v", roster)
		}
	})
	t.Run("same address", func(t *testing.T) {
		fc := newFakeCluster(t, 2, 0)
		_, port, _ := strings.Cut(fc.addr(0), ":")
		var logs testutil.SyncBuffer
		c := dialCluster(t, "LocalHost:"+port, &logs)
		if c.Addr() != "LocalHost:"+port || len(fc.ops(1, 0)) != 0 || len(fc.commands(0, wire.CmdLoginRegister)) != 1 {
			t.Fatalf("client moved to %s", c.Addr())
		}
	})
	t.Run("disabled", func(t *testing.T) {
		fc := newFakeCluster(t, 2, 1)
		var logs testutil.SyncBuffer
		c := dialCluster(t, fc.addr(0), &logs, WithClusterPolicy(ClusterPolicy{DisableRedirect: true}))
		if c.Addr() != fc.addr(0) || len(fc.ops(1, 0)) != 0 || len(fc.commands(0, wire.CmdGetClusterMetadata)) != 0 {
			t.Fatalf("client on %s", c.Addr())
		}
	})
}

// TestClusterNoLeader: a metadata reply without a leader is polled for
// LeaderlessWait, then the client stays; a leader that appears while
// polling is followed; an unreadable metadata reply leaves the client
// where it is.
func TestClusterNoLeader(t *testing.T) {
	t.Run("waits then stays", func(t *testing.T) {
		fc := newFakeCluster(t, 3, noLeader)
		var logs testutil.SyncBuffer
		start := time.Now()
		c := dialCluster(t, fc.addr(0), &logs) // LeaderlessWait 300 ms, polls every 50 ms
		took := time.Since(start)
		reads := len(fc.commands(0, wire.CmdGetClusterMetadata))
		if c.Addr() != fc.addr(0) || len(fc.ops(1, 0))+len(fc.ops(2, 0)) != 0 {
			t.Fatalf("client moved to %s", c.Addr())
		}
		if took < 250*time.Millisecond || reads < 3 || reads > 7 {
			t.Fatalf("Dial took %v with %d metadata reads, want about 300 ms of polls every 50 ms", took, reads)
		}
	})
	t.Run("leader appears", func(t *testing.T) {
		fc := newFakeCluster(t, 3, noLeader)
		stop, done := make(chan struct{}), make(chan struct{})
		t.Cleanup(func() { close(stop); <-done })
		go func() { // elect node 1 after the third poll
			defer close(done)
			for len(fc.commands(0, wire.CmdGetClusterMetadata)) < 3 {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			fc.setLeader(1)
		}()
		var logs testutil.SyncBuffer
		c := dialCluster(t, fc.addr(0), &logs, WithClusterPolicy(ClusterPolicy{LeaderlessWait: 10 * time.Second, LeaderlessPoll: 20 * time.Millisecond}))
		if c.Addr() != fc.addr(1) {
			t.Fatalf("client on %s, want the leader that appeared", c.Addr())
		}
	})
	t.Run("metadata fails", func(t *testing.T) {
		fc := newFakeCluster(t, 2, 1)
		fc.failMetadata(0, wire.ErrInvalidCommand.Code)
		var logs testutil.SyncBuffer
		c := dialCluster(t, fc.addr(0), &logs)
		if c.Addr() != fc.addr(0) || len(fc.commands(0, wire.CmdGetClusterMetadata)) != 1 || len(fc.ops(1, 0)) != 0 {
			t.Fatalf("client on %s", c.Addr())
		}
	})
}

// TestClusterLeaderFailover58: a request that keeps getting 58 for
// FailoverCheck makes the client re-read the metadata and move to the new
// leader, where the identical request (same client id, request number,
// checksum and body) is sent again under the new session.
func TestClusterLeaderFailover58(t *testing.T) {
	for _, tc := range []struct {
		name string
		code wire.Command
		run  func(ctx context.Context, c *Client) error
	}{
		{"metadata write", wire.CmdDeleteStream, func(ctx context.Context, c *Client) error {
			return c.DeleteStream(ctx, wire.NumericID(1))
		}},
		{"partition write", wire.CmdSendMessages, func(ctx context.Context, c *Client) error {
			_, err := c.SendMessages(ctx, wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(1), []wire.Message{{Payload: []byte("once")}})
			return err
		}},
		{"producer", wire.CmdSendMessages, func(ctx context.Context, c *Client) error {
			p, err := c.NewProducer(ctx, wire.NumericID(1), wire.NumericID(1), WithPartition(1))
			if err != nil {
				return err
			}
			if err := p.Send(ctx, Message{Payload: []byte("once")}); err != nil {
				return err
			}
			if err := p.Flush(ctx); err != nil {
				return err
			}
			return p.Close(ctx)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFakeCluster(t, 2, 0)
			var logs testutil.SyncBuffer
			c := dialCluster(t, fc.addr(0), &logs)
			ctx := ctxTimeout(t)
			if err := c.DeleteStream(ctx, wire.NumericID(9)); err != nil { // request 1, accepted by the leader
				t.Fatal(err)
			}
			fc.setLeader(1)
			start := time.Now()
			if err := tc.run(ctx, c); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if c.Addr() != fc.addr(1) {
				t.Fatalf("client on %s, want the new leader", c.Addr())
			}
			rejected := fc.commands(0, tc.code)
			if tc.code == wire.CmdDeleteStream {
				rejected = rejected[1:] // the first delete was accepted
			}
			moved := onlyRequest(t, fc, 1, tc.code)
			if len(rejected) < 10 || took < 200*time.Millisecond {
				t.Fatalf("%d attempts on the old leader in %v, want replays for the 200 ms failover check", len(rejected), took)
			}
			for _, r := range append(rejected, moved) {
				first := rejected[0]
				if r.Hdr.Client != c.ID() || r.Hdr.Request != 2 || r.Hdr.RequestChecksum != first.Hdr.RequestChecksum || !bytes.Equal(r.Body, first.Body) {
					t.Fatalf("attempt on conn %d: client %v request %d, want the same id and request 2 with the same body", r.Conn, r.Hdr.Client, r.Hdr.Request)
				}
			}
			if rejected[0].Hdr.Session != 1 || moved.Hdr.Session != 1 {
				t.Fatalf("sessions %d then %d, want each node's own epoch", rejected[0].Hdr.Session, moved.Hdr.Session)
			}
			if reg := onlyRequest(t, fc, 1, wire.CmdLoginRegister); reg.Hdr.Client != c.ID() {
				t.Fatal("login on the new leader under another client id")
			}
			if n := len(fc.commands(0, wire.CmdGetClusterMetadata)); n != 2 {
				t.Fatalf("%d metadata reads on the old leader, want the login's and the failover check's", n)
			}
			wantRedirectLog(t, &logs, fc.addr(0), fc.addr(1))
		})
	}
}

// TestClusterLeader57StaysOnConnection: 57 is replayed on the same
// connection, without a failover check, even past FailoverCheck.
func TestClusterLeader57StaysOnConnection(t *testing.T) {
	fc := newFakeCluster(t, 2, 0)
	var logs testutil.SyncBuffer
	c := dialCluster(t, fc.addr(0), &logs)
	fc.setView(0, 1) // a check now would move the client
	var rejected atomic.Int32
	fc.setHook(func(node int, cn *fakeConn, r fakeReq) bool {
		if r.Command() == wire.CmdDeleteStream && rejected.Add(1) <= 60 { // 60 × 5 ms > 200 ms
			cn.replyOp(r, wire.OpDeleteStream, 0, wire.AppendResultError(nil, wire.ErrTransientNotCommitted.Code))
			return true
		}
		return false
	})
	if err := c.DeleteStream(ctxTimeout(t), wire.NumericID(1)); err != nil {
		t.Fatal(err)
	}
	dels := fc.commands(0, wire.CmdDeleteStream)
	if len(dels) != 61 || c.Addr() != fc.addr(0) || len(fc.ops(1, 0)) != 0 {
		t.Fatalf("%d attempts, client on %s", len(dels), c.Addr())
	}
	for _, d := range dels {
		if d.Conn != 0 || d.Hdr.Request != 1 || !bytes.Equal(d.Frame, dels[0].Frame) {
			t.Fatal("57 replay differs or moved")
		}
	}
	if n := len(fc.commands(0, wire.CmdGetClusterMetadata)); n != 1 {
		t.Fatalf("%d metadata reads, want only the login's", n)
	}
}

// TestClusterLeaderReconnectRotates: when the connection drops with a
// request in flight, the reconnect rotates through the current address,
// the seeds and the roster learned from the metadata; it logs in under
// the same client id, settles on the leader and resends the request with
// its request number.
func TestClusterLeaderReconnectRotates(t *testing.T) {
	killOnDelete := func(fc *fakeCluster, victim int) {
		fc.setHook(func(node int, cn *fakeConn, r fakeReq) bool {
			if node == victim && r.Command() == wire.CmdDeleteStream {
				fc.nodes[victim].kill()
				return true
			}
			return false
		})
	}
	check := func(t *testing.T, fc *fakeCluster, c *Client, victim, to int) {
		t.Helper()
		lost := onlyRequest(t, fc, victim, wire.CmdDeleteStream)
		resent := onlyRequest(t, fc, to, wire.CmdDeleteStream)
		if resent.Hdr.Client != c.ID() || resent.Hdr.Request != lost.Hdr.Request || resent.Hdr.Request != 1 ||
			resent.Hdr.RequestChecksum != lost.Hdr.RequestChecksum || !bytes.Equal(resent.Body, lost.Body) {
			t.Fatalf("resent: client %v request %d, lost: request %d", resent.Hdr.Client, resent.Hdr.Request, lost.Hdr.Request)
		}
		if reg := onlyRequest(t, fc, to, wire.CmdLoginRegister); reg.Hdr.Client != c.ID() {
			t.Fatal("re-login under another client id")
		}
		if c.Addr() != fc.addr(to) {
			t.Fatalf("client on %s, want %s", c.Addr(), fc.addr(to))
		}
	}
	t.Run("seed", func(t *testing.T) {
		fc := newFakeCluster(t, 2, 0)
		fc.failMetadata(0, wire.ErrInvalidCommand.Code) // nothing learned: only the seed list knows node 1
		var logs testutil.SyncBuffer
		c := dialCluster(t, fc.addr(0)+","+fc.addr(1), &logs)
		if c.Addr() != fc.addr(0) {
			t.Fatalf("client on %s, want the first seed", c.Addr())
		}
		fc.setLeader(1)
		killOnDelete(fc, 0)
		if err := c.DeleteStream(ctxTimeout(t), wire.NumericID(1)); err != nil {
			t.Fatal(err)
		}
		check(t, fc, c, 0, 1)
	})
	t.Run("roster", func(t *testing.T) {
		fc := newFakeCluster(t, 3, 0)
		var logs testutil.SyncBuffer
		c := dialCluster(t, fc.addr(0), &logs) // learns nodes 1 and 2
		fc.setLeader(2)
		killOnDelete(fc, 0)
		if err := c.DeleteStream(ctxTimeout(t), wire.NumericID(1)); err != nil {
			t.Fatal(err)
		}
		// Node 0 refuses, node 1 (the next roster entry) takes the login
		// and names node 2, where the request is resent.
		check(t, fc, c, 0, 2)
		if reg := onlyRequest(t, fc, 1, wire.CmdLoginRegister); reg.Hdr.Client != c.ID() {
			t.Fatal("login on node 1 under another client id")
		}
		if n := len(fc.commands(1, wire.CmdDeleteStream)); n != 0 {
			t.Fatalf("node 1 got %d deletes", n)
		}
		wantRedirectLog(t, &logs, fc.addr(1), fc.addr(2))
	})
}

// TestClusterLeaderRedirectLimit: two nodes that name each other as
// leader stop the client after MaxRedirects moves instead of looping.
func TestClusterLeaderRedirectLimit(t *testing.T) {
	fc := newFakeCluster(t, 2, 0)
	fc.setView(0, 1)
	fc.setView(1, 0)
	var logs testutil.SyncBuffer
	c := dialCluster(t, fc.addr(0), &logs)
	if c.Addr() != fc.addr(1) {
		t.Fatalf("client on %s, want node 1 after 3 moves", c.Addr())
	}
	regs := len(fc.commands(0, wire.CmdLoginRegister)) + len(fc.commands(1, wire.CmdLoginRegister))
	reads := len(fc.commands(0, wire.CmdGetClusterMetadata)) + len(fc.commands(1, wire.CmdGetClusterMetadata))
	moves := strings.Count(logs.String(), `msg="following cluster leader"`)
	if regs != 4 || reads != 4 || moves != 3 {
		t.Fatalf("%d logins, %d metadata reads, %d moves; want 4, 4, 3", regs, reads, moves)
	}
	if err := c.Ping(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
}

// TestSeedDial: Dial tries the seeds in order and uses the first that
// answers; when none does, the error names each.
func TestSeedDial(t *testing.T) {
	dead := deadAddr(t)
	s := newFakeServer(t, nil)
	c, err := Dial(ctxTimeout(t), dead, WithServerAddresses(s.Addr()), WithCredentials("iggy", "iggy"), WithHeartbeat(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Addr() != s.Addr() {
		t.Fatalf("client on %s", c.Addr())
	}
	dead2 := deadAddr(t)
	_, err = Dial(ctxTimeout(t), dead+","+dead2)
	if err == nil || !strings.Contains(err.Error(), dead) || !strings.Contains(err.Error(), dead2) {
		t.Fatalf("err = %v, want both seeds named", err)
	}
	if _, err := Dial(ctxTimeout(t), ""); !errors.Is(err, errNoAddress) {
		t.Fatalf("no address: %v", err)
	}
	if _, err := Dial(ctxTimeout(t), s.Addr()+",,x"); err == nil {
		t.Fatal("empty seed accepted")
	}
}

// TestClusterLeaderLogin58: a login answered 58 (a follower that cannot
// forward it yet) is replayed on the same connection, past FailoverCheck,
// before the client settles on the leader.
func TestClusterLeaderLogin58(t *testing.T) {
	fc := newFakeCluster(t, 2, 1)
	var rejected atomic.Int32
	fc.setHook(func(node int, cn *fakeConn, r fakeReq) bool {
		if node == 0 && r.Hdr.Operation == wire.OpRegister && rejected.Add(1) <= 50 { // 50 × 5 ms > 200 ms
			cn.replyOp(r, wire.OpRegister, 0, wire.AppendResultError(nil, wire.ErrTransientNotAccepted.Code))
			return true
		}
		return false
	})
	var logs testutil.SyncBuffer
	c := dialCluster(t, fc.addr(0), &logs)
	regs := fc.commands(0, wire.CmdLoginRegister)
	if len(regs) != 51 || c.Addr() != fc.addr(1) {
		t.Fatalf("%d logins on node 0, client on %s", len(regs), c.Addr())
	}
	for _, r := range regs {
		if r.Conn != 0 || !bytes.Equal(r.Frame, regs[0].Frame) {
			t.Fatal("login replay moved or differs")
		}
	}
	if n := len(fc.commands(0, wire.CmdGetClusterMetadata)); n != 1 {
		t.Fatalf("%d metadata reads on node 0, want 1 after the login", n)
	}
}
