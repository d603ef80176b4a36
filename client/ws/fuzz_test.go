package ws

import (
	"bytes"
	"net"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// recorder is a net.Conn that records each Write as one message.
type recorder struct {
	net.Conn
	msgs [][]byte
}

func (r *recorder) Write(p []byte) (int, error) {
	r.msgs = append(r.msgs, append([]byte(nil), p...))
	return len(p), nil
}

// FuzzConnWrite: however a stream of valid frames is cut into writes,
// each frame goes out as exactly one message.
func FuzzConnWrite(f *testing.F) {
	f.Add(uint16(0), uint16(300), []byte{1, 2, 3}, uint8(7))
	f.Add(uint16(1000), uint16(0), []byte{}, uint8(1))
	f.Fuzz(func(t *testing.T, a, b uint16, body []byte, cut uint8) {
		var stream []byte
		var frames [][]byte
		for _, n := range []int{int(a) % 2000, int(b) % 2000, len(body)} {
			h := wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Request: uint64(n)}
			h.Size = uint32(wire.HeaderSize + n)
			fr := append(h.AppendTo(nil), make([]byte, n)...)
			copy(fr[wire.HeaderSize:], body)
			frames = append(frames, fr)
			stream = append(stream, fr...)
		}
		rec := &recorder{}
		c := &Conn{Conn: rec, max: 1 << 20}
		step := int(cut)%97 + 1
		for len(stream) > 0 {
			k := min(step, len(stream))
			if n, err := c.Write(stream[:k]); err != nil || n != k {
				t.Fatalf("write %d: %d, %v", k, n, err)
			}
			stream = stream[k:]
			step = step*7%301 + 1
		}
		if len(rec.msgs) != len(frames) {
			t.Fatalf("%d messages for %d frames", len(rec.msgs), len(frames))
		}
		for i := range frames {
			if !bytes.Equal(rec.msgs[i], frames[i]) {
				t.Fatalf("message %d differs from its frame", i)
			}
		}
	})
}
