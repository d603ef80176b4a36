package itest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/wire"
)

// addUser adds an active user with the given global permissions.
func addUser(t *testing.T, s *Server, id auth.UserID, name string, g auth.GlobalPermissions) {
	t.Helper()
	got, err := s.Broker.Metadata().CreateUser(name, name+"-pw", wire.UserActive, metadata.WirePermissions(g))
	if err != nil || got != uint32(id) {
		t.Fatalf("create user %s: id %d, %v (want id %d)", name, got, err, id)
	}
}

func getMe(t *testing.T, c *Client) wire.ClientDetails {
	t.Helper()
	f := c.Call(wire.CmdGetMe, nil)
	var me wire.ClientDetails
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		t.Fatalf("GET_ME answered %v", f)
	}
	if err := me.Decode(f.Body); err != nil {
		t.Fatalf("GET_ME body: %v", err)
	}
	return me
}

func TestClientCommands(t *testing.T) {
	s := Start(t)
	addUser(t, s, 1, "viewer", auth.GlobalPermissions{ReadStreams: true})
	addUser(t, s, 2, "operator", auth.GlobalPermissions{ReadServers: true})

	root := s.Dial(t)
	root.LoginRoot()
	anon := s.Dial(t)
	anon.Ping()
	viewer := s.Dial(t)
	viewer.Login("viewer", "viewer-pw")
	operator := s.Dial(t)
	operator.Login("operator", "operator-pw")

	me := getMe(t, root)
	want := wire.ClientDetails{ClientID: me.ClientID, UserID: 0, Transport: wire.TransportTCP, Address: root.Conn.LocalAddr().String()}
	if d := cmp.Diff(want, me, cmpEmpty); d != "" {
		t.Fatalf("GET_ME (-want +got):\n%s", d)
	}
	if vme := getMe(t, viewer); vme.UserID != 1 || vme.ClientID == me.ClientID {
		t.Fatalf("viewer GET_ME %+v", vme)
	}

	// GET_CLIENTS lists every connection, logged in or not.
	for _, c := range []*Client{root, operator} {
		f := c.Call(wire.CmdGetClients, nil)
		var list wire.Clients
		if f.Reply.Status != 0 || list.Decode(f.Body) != nil {
			t.Fatalf("GET_CLIENTS answered %v", f)
		}
		byAddr := map[string]wire.Client{}
		for _, cl := range list {
			byAddr[cl.Address] = cl
		}
		if len(list) != 4 {
			t.Fatalf("GET_CLIENTS listed %d clients: %+v", len(list), list)
		}
		for conn, user := range map[*Client]uint32{root: 0, anon: dispatch.UnauthenticatedUserID, viewer: 1, operator: 2} {
			cl, ok := byAddr[conn.Conn.LocalAddr().String()]
			if !ok || cl.UserID != user || cl.Transport != wire.TransportTCP || cl.ConsumerGroupsCount != 0 {
				t.Fatalf("entry for %s: %+v (found %v), want user %d", conn.Conn.LocalAddr(), cl, ok, user)
			}
		}
	}

	// GET_CLIENT by id; unknown id is an empty body.
	req := wire.GetClient{ClientID: me.ClientID}
	f := operator.Call(wire.CmdGetClient, req.AppendTo(nil))
	var got wire.ClientDetails
	if f.Reply.Status != 0 || got.Decode(f.Body) != nil {
		t.Fatalf("GET_CLIENT answered %v", f)
	}
	if d := cmp.Diff(me, got, cmpEmpty); d != "" {
		t.Fatalf("GET_CLIENT (-want +got):\n%s", d)
	}
	missing := wire.GetClient{ClientID: 999999}
	if f := root.Call(wire.CmdGetClient, missing.AppendTo(nil)); f.Reply.Status != 0 || len(f.Body) != 0 {
		t.Fatalf("GET_CLIENT of an unknown id answered %v", f)
	}

	// server_info is required for GET_CLIENT(S); GET_ME needs only a login.
	ExpectStatus(t, viewer.Call(wire.CmdGetClients, nil), wire.ErrUnauthorized.Code)
	ExpectStatus(t, viewer.Call(wire.CmdGetClient, req.AppendTo(nil)), wire.ErrUnauthorized.Code)
	ExpectStatus(t, anon.Call(wire.CmdGetMe, nil), wire.ErrUnauthenticated.Code)

	// Malformed bodies; bytes after the fields are ignored (the
	// reference decodes a prefix).
	ExpectStatus(t, root.Call(wire.CmdGetClient, []byte{1, 2}), wire.ErrInvalidCommand.Code)
	ExpectStatus(t, root.Call(wire.CmdGetClient, []byte{0x3f, 0x42, 0x0f, 0, 5}), 0)
	if a, b := ExpectPlain(t, root.Call(wire.CmdGetMe, []byte{0})), ExpectPlain(t, root.Call(wire.CmdGetMe, nil)); cmp.Diff(a, b) != "" {
		t.Fatalf("GET_ME with a stray byte: %x, without: %x", a, b)
	}
	if a, b := ExpectPlain(t, root.Call(wire.CmdGetClients, []byte{0})), ExpectPlain(t, root.Call(wire.CmdGetClients, nil)); cmp.Diff(a, b) != "" {
		t.Fatalf("GET_CLIENTS with a stray byte: %x, without: %x", a, b)
	}

	// A closed connection disappears from the list.
	anon.Conn.Close()
	waitFor(t, "closed connection unlisted", func() bool {
		f := root.Call(wire.CmdGetClients, nil)
		var list wire.Clients
		return list.Decode(f.Body) == nil && len(list) == 3
	})
}
