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
	tok, err := auth.NewToken(nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Broker.Users().PutPAT(auth.PAT{UserID: auth.RootUserID, Name: "ci", TokenHash: auth.HashToken(tok)})
	c := s.Dial(t)
	r, f := c.LoginWith(PATBody(tok))
	if r.Session == 0 || r.UserID != 0 {
		t.Fatalf("PAT login answered %v", f)
	}
	c.Ping()
}
