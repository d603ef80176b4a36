package dispatch

import (
	"bytes"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// TestEmptyRequestsIgnoreBodyBytes: PING and GET_ME have no request
// fields; like the reference (a prefix of no fields) they answer the same
// with or without bytes in the body.
func TestEmptyRequestsIgnoreBodyBytes(t *testing.T) {
	d, c := newDispatcher(t)
	serve := func(code wire.Command, body []byte) (wire.ReplyHeader, []byte) {
		t.Helper()
		var x Exchange
		x.Header = wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: code}
		x.Body = body
		x.Conn = c
		d.Serve(&x)
		var r wire.ReplyHeader
		if wire.PeekKind(x.Head[:]) != wire.KindReply || r.Decode(x.Head[:]) != nil {
			t.Fatalf("code %d: no reply", code)
		}
		return r, bytes.Clone(x.Out)
	}
	// Only PING is served before login; GET_ME answers 40 either way,
	// which still shows the body is not what decides.
	for _, code := range []wire.Command{wire.CmdPing, wire.CmdGetMe, wire.CmdGetClients} {
		want, wantBody := serve(code, nil)
		got, gotBody := serve(code, []byte{0xde, 0xad, 0xbe, 0xef})
		if got.Status != want.Status || !bytes.Equal(gotBody, wantBody) {
			t.Errorf("code %d: with junk status %d body %x, without status %d body %x", code, got.Status, gotBody, want.Status, wantBody)
		}
	}
	if r, _ := serve(wire.CmdPing, []byte{1, 2, 3, 4}); r.Status != 0 {
		t.Errorf("PING with a body: status %d, want 0", r.Status)
	}
}
