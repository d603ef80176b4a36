package dispatch

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// TestAttachOnAnUnboundConnection: ATTACH_SESSION is served before the
// session gate (an unbound connection sends it), answers 58 while the
// session is unknown, and binds the connection to the owner's session.
func TestAttachOnAnUnboundConnection(t *testing.T) {
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	store := auth.NewMemStore()
	root, err := auth.NewRootUser(h, "iggy", "iggy")
	if err != nil {
		t.Fatal(err)
	}
	store.PutUser(root)
	table := session.NewClientTable(8, nil)
	m := session.NewManager(auth.NewAuthenticator(store, h, nil), session.NewMemLog(nil, table.Apply), table, session.Options{ServerVersion: "t"})
	d := New(m, store, Options{})
	client := wire.Uint128{Lo: 5}
	login := wire.LoginRegister{Version: wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "t", SDKVersion: "1"}, Username: "iggy", Password: "iggy"}
	attach := func(c *session.Conn, epoch uint64) wire.ReplyHeader {
		t.Helper()
		var x Exchange
		x.Conn = c
		x.Header = wire.RequestHeader{Client: client, Operation: wire.OpNonReplicated, Code: wire.CmdAttachSession, Request: 1}
		body := wire.AttachSession{Session: epoch, Login: login.AppendTo(nil)}
		x.Body = body.AppendTo(nil)
		d.Serve(&x)
		var r wire.ReplyHeader
		if err := r.Decode(x.Head[:]); err != nil {
			t.Fatalf("attach answer: %v", err)
		}
		if r.Status == 0 {
			var lr wire.LoginRegisterReply
			if err := lr.Decode(x.Out); err != nil || lr.Session != epoch {
				t.Fatalf("attach reply %+v %v", lr, err)
			}
		}
		return r
	}
	node := m.Open(session.TransportTCP, "node", nil)
	if r := attach(node, 1); r.Status != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("attach before the login: status %d", r.Status)
	}
	owner := m.Open(session.TransportTCP, "owner", nil)
	res := m.Login(owner, client, login.AppendTo(nil))
	if res.Reply.Session == 0 {
		t.Fatalf("login %+v", res)
	}
	if r := attach(node, res.Reply.Session); r.Status != 0 {
		t.Fatalf("attach: status %d", r.Status)
	}
	if node.Session() != res.Reply.Session {
		t.Fatalf("attached session %d, want %d", node.Session(), res.Reply.Session)
	}
}
