package partition

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// userOf returns the authenticated user and client identity of the
// connection (dispatch has checked the session is bound).
func userOf(x *dispatch.Exchange) (user uint32, client wire.Uint128, ok bool) {
	b, ok := x.Conn.Binding()
	if !ok {
		return 0, wire.Uint128{}, false
	}
	return uint32(b.UserID), b.Client, true
}

// pickPartition resolves the target partition of a send to topic ref
// (semantics.md §4.1) with the topic's Balanced counter (a topic this node
// holds no partition of keeps its counter in the plane). ok is false when
// the topic has no such partition.
func (p *Plane) pickPartition(ref catalog.TopicRef, pt wire.Partitioning, ids []uint32) (uint32, bool) {
	var rr *atomic.Uint32
	if tp := p.lookupTopic(ref.Incarnation); tp != nil {
		rr = &tp.rr
	} else {
		c, _ := p.remoteRR.LoadOrStore(ref.Incarnation, new(atomic.Uint32))
		rr = c.(*atomic.Uint32)
	}
	return pick(rr, pt, ids)
}

// pick resolves the target partition with the Balanced counter rr.
func pick(rr *atomic.Uint32, pt wire.Partitioning, ids []uint32) (uint32, bool) {
	if len(ids) == 0 {
		return 0, false
	}
	switch pt.Kind {
	case wire.PartitionByID:
		return pt.PartitionID, has(ids, pt.PartitionID)
	case wire.PartitionByKey:
		return ids[xhash.XXH32(pt.Key, 0)%uint32(len(ids))], true
	default:
		// Balanced: the counter starts at 0 and each send takes
		// next = (c + 1) % partitions_count, as semantics.md §4.1 states.
		return ids[rr.Add(1)%uint32(len(ids))], true
	}
}

// send serves SEND_MESSAGES (operation 160). Every failure to resolve the
// target (unknown stream, topic or partition, a topic without partitions)
// is ResourceNotFound (20), as the reference answers on the
// partition-write path (semantics.md §4.1; docs/DESIGN.md, "Reference
// parity"); SDKs that watch for PartitionNotFound (3007) see 20 from the
// reference too.
func (p *Plane) send(x *dispatch.Exchange) { p.sendAt(x, nil) }

// sendAt serves a send received from a client (fwd nil) or forwarded by
// another node (forward.go). In cluster mode the send is routed once its
// partition is picked, and the send permission is checked where it
// runs.
func (p *Plane) sendAt(x *dispatch.Exchange, fwd *remoteRequest) {
	cat := p.catalog()
	if cat == nil {
		// No topic resolver (no metadata plane wired): not served.
		x.Deny(wire.ErrFeatureUnavailable.Code)
		return
	}
	user, client, ok := userOf(x)
	if !ok {
		x.Deny(wire.ErrResourceNotFound.Code)
		return
	}
	var req wire.SendMessages
	if err := req.DecodeMetadata(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	ref, ids, err := cat.ResolveTopic(req.StreamID, req.TopicID)
	if err != nil {
		x.Deny(wire.ErrResourceNotFound.Code)
		return
	}
	routed := p.opts.Forwarder != nil
	if !routed && !cat.Allowed(user, catalog.ActionSend, ref.StreamID, ref.TopicID) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	var pid uint32
	if fwd != nil {
		// The node that forwarded it picked the partition.
		pid, ok = fwd.partition, has(ids, fwd.partition)
	} else {
		pid, ok = p.pickPartition(ref, req.Partitioning, ids)
	}
	if !ok {
		x.Deny(wire.ErrResourceNotFound.Code)
		return
	}
	if routed {
		if p.elsewhere(x, fwd, ref, pid) {
			return
		}
		if !cat.Allowed(user, catalog.ActionSend, ref.StreamID, ref.TopicID) {
			x.Deny(wire.ErrUnauthorized.Code)
			return
		}
	}
	part := p.lookup(ref.Incarnation, pid)
	if part == nil {
		x.Deny(wire.ErrResourceNotFound.Code)
		return
	}
	if part.log == nil {
		x.Deny(wire.ErrCannotAppendMessage.Code)
		return
	}
	// The rest of wire.SendMessages.Admit (the metadata is decoded).
	batch, err := wire.ValidateBatch(req.Batch)
	if err == nil && batch.MessageCount() != req.MessagesCount {
		err = wire.ErrInvalidCommand
	}
	if err != nil {
		x.Deny(wire.CodeOf(err))
		return
	}
	count := batch.MessageCount()
	rec := batch.Bytes()
	if !p.fitsRecord(part, len(rec), count) {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	// The duplicate window identifies a request by its body. Admission
	// verified every frame checksum and the batch checksum, which binds
	// all frame checksums, so the metadata plus the batch header as
	// received (before stamping) identify the body as well as hashing all
	// of it would, without a second pass over the payloads.
	w := commit.Write{Kind: commit.Send, Windowed: true, Count: count, Key: commit.Key{
		Client: client, Request: x.Header.Request, Hash: xxh3.Hash(x.Body[:len(x.Body)-len(rec)+wire.BatchHeaderSize])}}
	sealed, buf, code := p.seal(part, rec)
	if code != 0 {
		x.Deny(code)
		return
	}
	if buf != nil {
		defer part.crypt.cipher.PutBuffer(buf)
	}
	w.Rec = sealed
	if part.crypt != nil {
		w.KeyTag = part.crypt.tag
	}
	out := part.commit.Commit(x.Conn.Context(), w)
	switch {
	case out.Code != 0:
		x.Deny(out.Code)
		return
	case out.Dup:
		x.Reply(binary.LittleEndian.AppendUint32(x.Scratch(), 0))
		return
	}
	reply := x.Scratch()
	reply = binary.LittleEndian.AppendUint32(reply, 1)
	reply = binary.LittleEndian.AppendUint32(reply, ref.StreamID)
	reply = binary.LittleEndian.AppendUint32(reply, ref.TopicID)
	reply = binary.LittleEndian.AppendUint32(reply, pid)
	reply = binary.LittleEndian.AppendUint64(reply, out.Base)
	x.Reply(reply)
	p.markCommitted(x, out)
}

// markCommitted puts a replicated write's cluster id, view (raft term),
// replica and op (raft index) into the reply header; a local write has
// none.
func (p *Plane) markCommitted(x *dispatch.Exchange, out commit.Outcome) {
	if out.Index != 0 {
		x.MarkCommitted(p.opts.ClusterID, uint32(out.Term), out.Replica, out.Index)
	}
}
