package itest

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

func TestLoginPingLogout(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.Ping() // PING is served before login
	r := c.LoginRoot()
	if r.UserID != 0 || r.Session == 0 || r.ServerProtocolVersion != wire.ProtocolVersion || r.ServerVersion == "" {
		t.Fatalf("login reply %+v", r)
	}
	c.Ping()
	h := c.Header(wire.OpLogout, 0)
	f := c.Do(h, nil)
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || f.Reply.Operation != wire.OpLogout || len(f.Body) != 0 || f.Reply.Request != h.Request {
		t.Fatalf("logout answered %v", f)
	}
	// Back to Connected: reads are refused again, PING is not.
	ExpectStatus(t, c.Call(wire.CmdGetMe, nil), wire.ErrUnauthenticated.Code)
	c.Ping()
	if s.Broker.Sessions().Table().Len() != 0 {
		t.Fatal("logout left a client-table entry")
	}
}

func TestLoginWithPAT(t *testing.T) {
	s := Start(t)
	tok, err := s.Broker.Metadata().CreatePAT(uint32(auth.RootUserID), "ci", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Dial(t)
	r, f := c.LoginWith(PATBody(tok))
	if r.Session == 0 || r.UserID != 0 {
		t.Fatalf("PAT login answered %v", f)
	}
	c.Ping()
}

func TestReplyEchoes(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	r := c.LoginRoot()
	h := c.Header(wire.OpNonReplicated, wire.CmdPing)
	h.Timestamp = 123456789
	h.Request = 42
	h.Cluster = wire.Uint128{Lo: 7, Hi: 8}
	f := c.Do(h, nil)
	want := wire.ReplyHeader{
		Prologue:  wire.Prologue{Cluster: h.Cluster, Size: wire.HeaderSize},
		Client:    c.ID,
		Op:        r.Session,
		Timestamp: h.Timestamp,
		Request:   42,
		Operation: wire.OpNonReplicated,
	}
	if f.Kind != wire.KindReply || f.Reply != want {
		t.Fatalf("PING reply\n got %+v\nwant %+v", f.Reply, want)
	}
	// Before login the op field is 0.
	d := s.Dial(t)
	if f := d.Call(wire.CmdPing, nil); f.Reply.Op != 0 || f.Reply.Status != 0 {
		t.Fatalf("unauthenticated PING reply %+v", f.Reply)
	}
	// A login reply is result-framed: [count=0][payload].
	_, lf := s.Dial(t).LoginWith(LoginBody(RootUsername, RootPassword))
	if lf.Reply.Operation != wire.OpRegister || len(lf.Body) < 4 || lf.Body[0]|lf.Body[1]|lf.Body[2]|lf.Body[3] != 0 {
		t.Fatalf("login reply %v body % x", lf, lf.Body)
	}
}
