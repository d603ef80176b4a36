package session

import (
	"sync/atomic"
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// attachBody is an ATTACH_SESSION body for session with the given
// password credentials.
func attachBody(session uint64, user, password string) []byte {
	l := wire.LoginRegister{Version: wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"}, Username: user, Password: password}
	a := wire.AttachSession{Session: session, Login: l.AppendTo(nil)}
	return a.AppendTo(nil)
}

// attachManager is newManager with a second user "bob" and a count of
// the committed logouts.
func attachManager(t *testing.T) (*Manager, *atomic.Int32) {
	t.Helper()
	m := newManager(t, nil)
	store := auth.NewMemStore()
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	root, err := auth.NewRootUser(h, "iggy", "iggy")
	if err != nil {
		t.Fatal(err)
	}
	hash, err := h.Hash("secret")
	if err != nil {
		t.Fatal(err)
	}
	store.PutUser(root)
	store.PutUser(auth.User{ID: 2, Username: "bob", Status: auth.StatusActive, PasswordHash: hash})
	m.auth = auth.NewAuthenticator(store, h, nil)
	var logouts atomic.Int32
	m.opts.OnLogout = func(wire.Uint128) { logouts.Add(1) }
	return m, &logouts
}

// TestAttachSharesTheSession: a second connection attached to a client's
// session is bound to the same client id and epoch; closing it, logging
// it out or evicting it commits no Logout and leaves the owner's session
// live.
func TestAttachSharesTheSession(t *testing.T) {
	m, logouts := attachManager(t)
	owner := m.Open(TransportTCP, "owner", nil)
	res := m.Login(owner, cid(7), loginBody())
	if res.Reply.Session == 0 {
		t.Fatalf("login: %+v", res)
	}
	epoch := res.Reply.Session
	for i, end := range []func(c *Conn){
		func(c *Conn) { m.Close(c, false) },
		func(c *Conn) {
			if code := m.Logout(c, 9); code != 0 {
				t.Fatalf("logout of an attached connection: %d", code)
			}
		},
		func(c *Conn) { m.Evicted(c) },
	} {
		c := m.Open(TransportTCP, "node", nil)
		a := m.Attach(c, cid(7), attachBody(epoch, "iggy", "iggy"))
		if a.Evict != 0 || a.Status != 0 || a.Reply.Session != epoch || a.Reply.UserID != uint32(auth.RootUserID) {
			t.Fatalf("attach %d: %+v", i, a)
		}
		b, ok := c.Binding()
		if !ok || !b.Attached || b.Client != cid(7) || b.Session != epoch {
			t.Fatalf("attach %d binding: %+v %v", i, b, ok)
		}
		again := m.Attach(c, cid(7), attachBody(epoch, "iggy", "iggy"))
		if again.Reply.Session != epoch {
			t.Fatalf("attach on a bound connection: %+v", again)
		}
		end(c)
		if _, bound := c.Binding(); bound {
			t.Fatalf("end %d left the connection bound", i)
		}
		if got, _, live := m.Table().(*ClientTable).Owner(cid(7)); !live || got != epoch {
			t.Fatalf("end %d: owner's session %d live %v", i, got, live)
		}
	}
	if n := logouts.Load(); n != 0 {
		t.Fatalf("%d logouts committed for attached connections", n)
	}
	if e, ok := m.Table().Epoch(cid(7)); !ok || e != epoch {
		t.Fatalf("epoch %d %v, want %d (an attach must not register)", e, ok, epoch)
	}
	m.Close(owner, false)
	if n := logouts.Load(); n != 1 {
		t.Fatalf("the owner's close committed %d logouts, want 1", n)
	}
}

func TestAttachRefusals(t *testing.T) {
	m, _ := attachManager(t)
	first := m.Login(m.Open(TransportTCP, "a", nil), cid(1), loginBody()).Reply.Session
	second := m.Login(m.Open(TransportTCP, "b", nil), cid(1), loginBody()).Reply.Session
	if second <= first {
		t.Fatalf("epochs %d then %d", first, second)
	}
	for name, tc := range map[string]struct {
		client wire.Uint128
		body   []byte
		evict  wire.EvictionReason
		status uint32
	}{
		"older session":       {cid(1), attachBody(first, "iggy", "iggy"), wire.EvictSessionTooLow, 0},
		"session not applied": {cid(1), attachBody(second+5, "iggy", "iggy"), 0, wire.ErrTransientNotAccepted.Code},
		"unknown client":      {cid(99), attachBody(1, "iggy", "iggy"), 0, wire.ErrTransientNotAccepted.Code},
		"wrong password":      {cid(1), attachBody(second, "iggy", "nope"), wire.EvictInvalidCredentials, 0},
		"another user":        {cid(1), attachBody(second, "bob", "secret"), wire.EvictInvalidCredentials, 0},
		"malformed":           {cid(1), []byte{1, 2, 3}, wire.EvictMalformedLogin, 0},
		"session 0":           {cid(1), attachBody(0, "iggy", "iggy"), wire.EvictMalformedLogin, 0},
	} {
		c := m.Open(TransportTCP, "x", nil)
		res := m.Attach(c, tc.client, tc.body)
		if res.Evict != tc.evict || res.Status != tc.status {
			t.Errorf("%s: %+v, want evict %d status %d", name, res, tc.evict, tc.status)
		}
		if _, bound := c.Binding(); bound {
			t.Errorf("%s: connection bound", name)
		}
	}
	// An ended session (its connection closed) is not attachable.
	m2, _ := attachManager(t)
	owner := m2.Open(TransportTCP, "a", nil)
	epoch := m2.Login(owner, cid(3), loginBody()).Reply.Session
	m2.Close(owner, false)
	if res := m2.Attach(m2.Open(TransportTCP, "b", nil), cid(3), attachBody(epoch, "iggy", "iggy")); res.Status != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("attach to an ended session: %+v", res)
	}
}

// TestAttachConsumer: ATTACH_CONSUMER_SESSION on a logged-in connection
// keeps its own client id and session and makes consumer groups know it
// by the coordinator's; a connection that is not logged in gets 40, a
// wrong epoch or another user's session 30 (StaleClient).
func TestAttachConsumer(t *testing.T) {
	m, _ := attachManager(t)
	coord := m.Open(TransportTCP, "coordinator", nil)
	epoch := m.Login(coord, cid(7), loginBody()).Reply.Session
	if epoch == 0 {
		t.Fatal("coordinator login failed")
	}
	data := m.Open(TransportTCP, "data", nil)
	if code := m.AttachConsumer(data, cid(7), epoch); code != wire.ErrUnauthenticated.Code {
		t.Fatalf("attach before login: %d", code)
	}
	if res := m.Login(data, cid(8), loginBody()); res.Reply.Session == 0 {
		t.Fatalf("data login: %+v", res)
	}
	own, _ := data.Binding()
	for _, bad := range []struct {
		client wire.Uint128
		epoch  uint64
	}{{cid(7), epoch + 1}, {cid(7), epoch - 1}, {cid(99), 1}} {
		if code := m.AttachConsumer(data, bad.client, bad.epoch); code != wire.ErrStaleClient.Code {
			t.Fatalf("attach to %v epoch %d: %d", bad.client, bad.epoch, code)
		}
	}
	bob := m.Open(TransportTCP, "bob", nil)
	l := wire.LoginRegister{Version: wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"}, Username: "bob", Password: "secret"}
	if res := m.Login(bob, cid(9), l.AppendTo(nil)); res.Reply.Session == 0 {
		t.Fatalf("bob login: %+v", res)
	}
	if code := m.AttachConsumer(bob, cid(7), epoch); code != wire.ErrStaleClient.Code {
		t.Fatalf("attach to another user's session: %d", code)
	}
	if b, _ := data.Binding(); b.GroupClient() != cid(8) {
		t.Fatalf("refused attaches changed the group client: %+v", b)
	}
	if code := m.AttachConsumer(data, cid(7), epoch); code != 0 {
		t.Fatalf("attach: %d", code)
	}
	b, _ := data.Binding()
	if b.Client != own.Client || b.Session != own.Session || b.GroupClient() != cid(7) || b.ConsumerSession != epoch {
		t.Fatalf("attached binding %+v (own %+v)", b, own)
	}
}
