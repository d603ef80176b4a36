package quic

import (
	"bytes"
	"github.com/iggo-dev/iggo/internal/transport/bufpool"
	"testing"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// FuzzReadFrame: any stream content either yields exactly the request
// frame at its start (header decoded, body the next size-256 bytes) or
// an error; it never panics or reads past the frame.
func FuzzReadFrame(f *testing.F) {
	h := wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}
	h.Size = wire.HeaderSize + 3
	f.Add(append(h.AppendTo(nil), 1, 2, 3, 9, 9))
	h.Size = wire.HeaderSize
	f.Add(h.AppendTo(nil))
	f.Add([]byte{1, 2, 3})
	const maxFrame = 4096
	var p bufpool.Pools
	f.Fuzz(func(t *testing.T, data []byte) {
		var hdr [wire.HeaderSize]byte
		x := new(dispatch.Exchange)
		r := bytes.NewReader(data)
		_, err := readFrame(r, &hdr, x, maxFrame, &p)
		valid := len(data) >= wire.HeaderSize && wire.PeekKind(data) == wire.KindRequest
		size := 0
		if valid {
			size = int(wire.PeekSize(data))
			valid = size >= wire.HeaderSize && size <= maxFrame && size <= len(data)
		}
		if valid != (err == nil) {
			t.Fatalf("valid %v, err %v", valid, err)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(x.Body, data[wire.HeaderSize:size]) || x.Header.Size != uint32(size) {
			t.Fatalf("body %d bytes, header size %d, want %d", len(x.Body), x.Header.Size, size)
		}
		if r.Len() != len(data)-size {
			t.Fatalf("read %d bytes past the frame", len(data)-size-r.Len())
		}
	})
}
