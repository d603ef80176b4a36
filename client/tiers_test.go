package client

import (
	"errors"
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func TestPartitionTiers(t *testing.T) {
	want := wire.PartitionTiersReply{Partitions: []wire.PartitionTiers{
		{PartitionID: 1, LocalBytes: 100, RemoteBytes: 900, RemoteOnlyBytes: 800, PendingBytes: 10, RemoteSegments: 3, PendingSegments: 1},
		{PartitionID: 2, LocalBytes: 5},
	}}
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Command() != wire.CmdPartitionTiers {
			return false
		}
		var req wire.GetPartitionTiers
		switch err := req.Decode(r.Body); {
		case err != nil:
			fc.reply(r, wire.ErrInvalidCommand.Code, nil)
		case req.TopicID == wire.NamedID("old"):
			// An older server does not know the code.
			fc.reply(r, wire.ErrInvalidCommand.Code, nil)
		case req.TopicID == wire.NamedID("off"):
			fc.reply(r, 0, (&wire.PartitionTiersReply{}).AppendTo(nil))
		default:
			fc.reply(r, 0, want.AppendTo(nil))
		}
		return true
	})
	c := dialFake(t, s)
	ctx := ctxTimeout(t)
	got, err := c.PartitionTiers(ctx, wire.NamedID("s"), wire.NumericID(2))
	if err != nil || !reflect.DeepEqual(got, want.Partitions) {
		t.Fatalf("tiers %+v %v", got, err)
	}
	reqs := s.requests()
	last := reqs[len(reqs)-1]
	var body wire.GetPartitionTiers
	if err := body.Decode(last.Body); err != nil || body.StreamID != wire.NamedID("s") || body.TopicID != wire.NumericID(2) ||
		last.Hdr.Operation != wire.OpNonReplicated {
		t.Fatalf("request %+v %+v %v", last.Hdr, body, err)
	}
	if got, err := c.PartitionTiers(ctx, wire.NamedID("s"), wire.NamedID("off")); err != nil || len(got) != 0 {
		t.Fatalf("tiered storage off: %+v %v", got, err)
	}
	if _, err := c.PartitionTiers(ctx, wire.NamedID("s"), wire.NamedID("old")); !errors.Is(err, wire.ErrInvalidCommand) {
		t.Fatalf("older server: %v", err)
	}
}
