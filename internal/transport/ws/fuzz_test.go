package ws

import (
	"bytes"
	"testing"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// FuzzReadFrame: a binary message is accepted exactly when it is one
// whole request frame (kind Request, 256 <= size <= limit, size equal to
// the message length); the body is then the frame's.
func FuzzReadFrame(f *testing.F) {
	h := wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}
	h.Size = wire.HeaderSize + 3
	one := append(h.AppendTo(nil), 1, 2, 3)
	f.Add(one)
	f.Add(append(append([]byte{}, one...), one...))
	f.Add(one[:200])
	const maxFrame = 4096
	s := &Server{cfg: Config{MaxFrameSize: maxFrame}}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{s: s}
		x := new(dispatch.Exchange)
		body, err := c.readFrame(bytes.NewReader(data), x)
		if body != nil {
			defer s.pools.PutBody(body)
		}
		valid := len(data) >= wire.HeaderSize && wire.PeekKind(data) == wire.KindRequest &&
			int(wire.PeekSize(data)) == len(data) && len(data) <= maxFrame
		if valid != (err == nil) {
			t.Fatalf("valid %v, err %v", valid, err)
		}
		if err == nil && !bytes.Equal(x.Body, data[wire.HeaderSize:]) {
			t.Fatalf("body %d bytes, want %d", len(x.Body), len(data)-wire.HeaderSize)
		}
	})
}
