package session

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

type recordingSink struct {
	mu      sync.Mutex
	reasons []wire.EvictionReason
}

func (s *recordingSink) Evict(_ wire.Uint128, r wire.EvictionReason) {
	s.mu.Lock()
	s.reasons = append(s.reasons, r)
	s.mu.Unlock()
}

func (s *recordingSink) got() []wire.EvictionReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wire.EvictionReason(nil), s.reasons...)
}

func newManager(t *testing.T, inGroup func(wire.Uint128) bool) *Manager {
	t.Helper()
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	store := auth.NewMemStore()
	root, err := auth.NewRootUser(h, "iggy", "iggy")
	if err != nil {
		t.Fatal(err)
	}
	store.PutUser(root)
	table := NewClientTable(16, nil)
	return NewManager(auth.NewAuthenticator(store, h, nil), NewMemLog(nil, table.Apply), table, Options{ServerVersion: "t", InGroup: inGroup})
}

func loginBody() []byte {
	l := wire.LoginRegister{Version: wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"}, Username: "iggy", Password: "iggy"}
	return l.AppendTo(nil)
}

func TestHeartbeatEvictsOnlyStaleGroupMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		member, other := cid(1), cid(2)
		m := newManager(t, func(c wire.Uint128) bool { return c == member })
		sinkA, sinkB, sinkC := &recordingSink{}, &recordingSink{}, &recordingSink{}
		a := m.Open(TransportTCP, "a", sinkA)
		b := m.Open(TransportTCP, "b", sinkB)
		c := m.Open(TransportTCP, "c", sinkC) // a member that keeps pinging
		for _, x := range []struct {
			conn   *Conn
			client wire.Uint128
		}{{a, member}, {b, other}, {c, cid(3)}} {
			if res := m.Login(x.conn, x.client, loginBody()); res.Reply.Session == 0 {
				t.Fatalf("login: %+v", res)
			}
		}
		m.opts.InGroup = func(cl wire.Uint128) bool { return cl == member || cl == cid(3) }
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { m.RunHeartbeat(ctx, 30*time.Second); close(done) }()

		// At the 30 s pass nobody is stale (stale means > 36 s).
		for range 3 {
			time.Sleep(11 * time.Second)
			m.Touch(c)
		}
		synctest.Wait()
		if got := sinkA.got(); len(got) != 0 {
			t.Fatalf("evicted at the 30 s pass: %v", got)
		}
		for range 3 {
			time.Sleep(10 * time.Second)
			m.Touch(c)
		}
		synctest.Wait()
		// 60 s: a and b have been idle for 60 s; only the member a is evicted.
		if got := sinkA.got(); len(got) != 1 || got[0] != wire.EvictStaleClient {
			t.Fatalf("member evictions %v", got)
		}
		if len(sinkB.got()) != 0 || len(sinkC.got()) != 0 {
			t.Fatalf("non-member or active client evicted: %v %v", sinkB.got(), sinkC.got())
		}
		if _, bound := a.Binding(); bound {
			t.Fatal("evicted connection still bound")
		}
		if _, ok := m.Table().Epoch(member); ok {
			t.Fatal("evicted session still in the table")
		}
		if _, ok := m.Table().Epoch(other); !ok {
			t.Fatal("non-member lost its session")
		}
		cancel()
		<-done
	})
}

func TestManagerIDs(t *testing.T) {
	m := newManager(t, nil)
	a := m.Open(TransportTCP, "a", nil)
	b := m.Open(TransportTCP, "b", nil)
	if a.ID == 0 || b.ID == a.ID {
		t.Fatalf("ids %d %d", a.ID, b.ID)
	}
	m.Close(a, false)
	if _, ok := m.Conn(a.ID); ok || m.Len() != 1 {
		t.Fatal("closed connection still registered")
	}
	if got := m.Conns(); len(got) != 1 || got[0] != b {
		t.Fatalf("Conns = %v", got)
	}
}

func TestLoginAlreadyBound(t *testing.T) {
	m := newManager(t, nil)
	c := m.Open(TransportTCP, "a", nil)
	first := m.Login(c, cid(1), loginBody())
	second := m.Login(c, cid(2), loginBody())
	if first.Reply.Session == 0 || second.Reply.Session != first.Reply.Session || second.CommitOp != 0 {
		t.Fatalf("first %+v second %+v", first, second)
	}
	if m.Table().Len() != 1 {
		t.Fatal("second login registered again")
	}
	if code := m.Logout(c, 1); code != 0 || m.Table().Len() != 0 {
		t.Fatalf("logout: %d, table %d", code, m.Table().Len())
	}
	if code := m.Logout(c, 2); code != 0 {
		t.Fatalf("unbound logout: %d", code)
	}
}
