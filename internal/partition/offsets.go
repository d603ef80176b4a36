package partition

import (
	"github.com/zeebo/xxh3"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// getOffset serves GET_CONSUMER_OFFSET (code 120): 20 bytes, or an empty
// body (status 0, which SDKs read as "no offset") when nothing is stored
// or the stream, topic or group is unknown, as the reference answers
// (semantics.md §5 names only the group; docs/DESIGN.md, "Reference
// parity", extends it to stream and topic). A missing partition of an
// existing topic stays PartitionNotFound (3007). Group offsets may be read
// by non-members.
//
// Permission (a choice): poll rights are checked on the resolved topic,
// so an unknown stream or topic answers empty to any logged-in user, as
// GET_STREAM and GET_TOPIC answer empty before their permission check; a
// user without rights on an existing topic gets Unauthorized (41).
func (p *Plane) getOffset(x *dispatch.Exchange) { p.getOffsetAt(x, nil) }

// getOffsetAt serves GET_CONSUMER_OFFSET received from a client (fwd
// nil) or forwarded by another node (forward.go).
func (p *Plane) getOffsetAt(x *dispatch.Exchange, fwd *remoteRequest) {
	var req wire.GetConsumerOffset
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if p.routeRead(x, fwd, req.StreamID, req.TopicID, req.Partition) {
		return
	}
	t, st, code := p.resolve(x, req.Consumer, req.StreamID, req.TopicID, req.Partition,
		resolveOpts{action: catalog.ActionPoll})
	if st != resolvedOK {
		switch code {
		case wire.ErrStreamIDNotFound.Code, wire.ErrTopicIDNotFound.Code, wire.ErrConsumerGroupIDNotFound.Code:
			x.Reply(nil)
			return
		}
		x.Deny(code)
		return
	}
	if t.part.log == nil {
		x.Deny(wire.ErrCannotReadMessage.Code)
		return
	}
	stored, ok := t.part.log.Offsets().Get(t.kind, t.id)
	if !ok {
		x.Reply(nil)
		return
	}
	_, next := t.part.bounds()
	out := wire.ConsumerOffset{PartitionID: t.part.id, CurrentOffset: currentOffset(next), StoredOffset: stored}
	x.Reply(out.AppendTo(x.Scratch()))
}

// offsetWrite commits a STORE/DELETE (w carries the kind, consumer and
// offset) through the partition's committer: through the duplicate window
// (ack = Quorum) or without it (ack = NoAck bypasses it,
// upstream-framing.md; a replicated NoAck write answers once the leader's
// checks pass). A committed group offset store is reported to the
// consumer groups (catalog.Topics.GroupCommitted: the in-flight mark of
// the cooperative hand-off; it may complete a pending revocation,
// semantics.md §6.3 step 4).
func (p *Plane) offsetWrite(x *dispatch.Exchange, t target, ack wire.OffsetAck, w commit.Write) {
	if w.Kind == commit.OffsetStore && t.kind == storage.KindGroup {
		w.Applied = func() { p.catalog().GroupCommitted(t.ref, t.id, t.client, t.part.id, w.Offset) }
	}
	if ack == wire.AckNone {
		w.Async = true
	} else {
		_, client, _ := userOf(x)
		w.Windowed = true
		w.Key = commit.Key{Client: client, Request: x.Header.Request, Hash: xxh3.Hash(x.Body)}
	}
	out := t.part.commit.Commit(x.Conn.Context(), w)
	if out.Dup {
		x.Reply(wire.AppendResultOK(x.Scratch()))
		return
	}
	p.answerWrite(x, out.Code)
	if out.Code == 0 {
		p.markCommitted(x, out)
	}
}

// answerWrite answers a result-framed write: code, or an empty success.
func (p *Plane) answerWrite(x *dispatch.Exchange, code uint32) {
	if code != 0 {
		x.Deny(code)
		return
	}
	x.Reply(wire.AppendResultOK(x.Scratch()))
}

// storeOffset serves STORE_CONSUMER_OFFSET (operation 161, result-framed):
// the offset must not pass the last committed offset (4100 InvalidOffset,
// also for an empty partition); an explicit store may move backwards.
func (p *Plane) storeOffset(x *dispatch.Exchange) { p.storeOffsetAt(x, nil) }

// storeOffsetAt serves STORE_CONSUMER_OFFSET received from a client (fwd
// nil) or forwarded by another node (forward.go).
func (p *Plane) storeOffsetAt(x *dispatch.Exchange, fwd *remoteRequest) {
	var req wire.StoreConsumerOffset
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if p.routeRead(x, fwd, req.StreamID, req.TopicID, req.Partition) {
		return
	}
	t, ok := p.writeTarget(x, req.Consumer, req.StreamID, req.TopicID, req.Partition)
	if !ok {
		return
	}
	part := t.part
	p.offsetWrite(x, t, req.Ack, commit.Write{Kind: commit.OffsetStore, Consumer: t.kind, ID: t.id, Offset: req.Offset,
		Check: func() uint32 {
			// The one validation of a store: not past the last committed
			// offset (an explicit store may move backwards).
			if first, next := part.bounds(); first == next || req.Offset >= next {
				return wire.ErrInvalidOffset.Code
			}
			return 0
		}})
}

// writeTarget resolves the partition a STORE/DELETE consumer offset
// writes to, answering the request itself when it cannot: the resolver's
// denial (20 ResourceNotFound for an unknown stream, topic, group or
// partition, 41 without permission), 20 for a group member without that
// partition, or CannotAppendMessage for a stopped partition.
func (p *Plane) writeTarget(x *dispatch.Exchange, c wire.Consumer, stream, topic wire.Identifier, opt wire.OptPartition) (target, bool) {
	t, st, code := p.resolve(x, c, stream, topic, opt,
		resolveOpts{action: catalog.ActionPoll, writeCodes: true, groupAccess: catalog.GroupCommit})
	switch {
	case st == resolvedDeny:
		x.Deny(code)
		return target{}, false
	case st == resolvedResync || st == resolvedNothing:
		x.Deny(wire.ErrResourceNotFound.Code)
		return target{}, false
	case t.part.log == nil:
		x.Deny(wire.ErrCannotAppendMessage.Code)
		return target{}, false
	}
	return t, true
}

// deleteOffset serves DELETE_CONSUMER_OFFSET (operation 162,
// result-framed): 3021 ConsumerOffsetNotFound when nothing is stored.
func (p *Plane) deleteOffset(x *dispatch.Exchange) { p.deleteOffsetAt(x, nil) }

// deleteOffsetAt serves DELETE_CONSUMER_OFFSET received from a client
// (fwd nil) or forwarded by another node (forward.go).
func (p *Plane) deleteOffsetAt(x *dispatch.Exchange, fwd *remoteRequest) {
	var req wire.DeleteConsumerOffset
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if p.routeRead(x, fwd, req.StreamID, req.TopicID, req.Partition) {
		return
	}
	t, ok := p.writeTarget(x, req.Consumer, req.StreamID, req.TopicID, req.Partition)
	if !ok {
		return
	}
	w := commit.Write{Kind: commit.OffsetDelete, Consumer: t.kind, ID: t.id}
	if req.Ack == wire.AckNone {
		// Answered before a replicated apply: the state here decides.
		part := t.part
		w.Check = func() uint32 {
			if _, ok := part.log.Offsets().Get(t.kind, t.id); !ok {
				return wire.ErrConsumerOffsetNotFound.Code
			}
			return 0
		}
	}
	p.offsetWrite(x, t, req.Ack, w)
}

// Register installs the partition-plane handlers in d: SEND_MESSAGES,
// POLL_MESSAGES (also as POLL_MESSAGES_ON_PRIMARY, which a node that does
// not lead the partition answers 58 instead of forwarding, see
// primaryOnly), the consumer-offset commands and VERIFY_PARTITION
// (verify.go). FLUSH_UNSAVED_BUFFER
// stays with the dispatcher (always FeatureUnavailable, semantics.md §4.3).
func (p *Plane) Register(d *dispatch.Dispatcher) {
	d.Handle(wire.CmdSendMessages, p.send)
	d.Handle(wire.CmdPollMessages, p.poll)
	d.Handle(wire.CmdPollMessagesOnPrimary, p.poll)
	d.Handle(wire.CmdGetConsumerOffset, p.getOffset)
	d.Handle(wire.CmdStoreConsumerOffset, p.storeOffset)
	d.Handle(wire.CmdDeleteConsumerOffset, p.deleteOffset)
	d.Handle(wire.CmdVerifyPartition, p.verify)
}
