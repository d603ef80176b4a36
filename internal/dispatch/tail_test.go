package dispatch

import (
	"io"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

type countingTail struct {
	n        int64
	released int
}

func (c *countingTail) Len() int64                         { return c.n }
func (c *countingTail) WriteTo(w io.Writer) (int64, error) { return 0, nil }
func (c *countingTail) Release()                           { c.released++ }

// TestReplyTail: the reply size counts the tail, and every way an answer
// is replaced or dropped releases the tail exactly once.
func TestReplyTail(t *testing.T) {
	d, c := newDispatcher(t)
	tests := []struct {
		name string
		then func(x *Exchange)
	}{
		{"reset", func(x *Exchange) { x.Reset() }},
		{"replaced by a denial", func(x *Exchange) { x.Deny(wire.ErrInvalidCommand.Code); x.Reset() }},
		{"replaced by an eviction", func(x *Exchange) { x.Evict(wire.EvictNoSession); x.Reset() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &Exchange{d: d, Conn: c, Header: wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPollMessages, Request: 3}}
			tail := &countingTail{n: 1000}
			x.ReplyTail([]byte{1, 2, 3}, tail)
			var r wire.ReplyHeader
			if err := r.Decode(x.Head[:]); err != nil || r.Size != wire.HeaderSize+3+1000 || x.Tail != tail {
				t.Fatalf("reply %+v %v", r, err)
			}
			tt.then(x)
			if tail.released != 1 || x.Tail != nil {
				t.Fatalf("released %d times, tail %v", tail.released, x.Tail)
			}
		})
	}
}
