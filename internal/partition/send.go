package partition

import (
	"encoding/binary"
	"errors"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
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

// hasPartition reports whether id is in the ascending list ids.
func hasPartition(ids []uint32, id uint32) bool {
	lo, hi := 0, len(ids)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ids[mid] < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo < len(ids) && ids[lo] == id
}

// pickPartition resolves the target partition of a send (semantics.md
// §4.1). ok is false when the topic has no such partition.
func (tp *topic) pickPartition(pt wire.Partitioning, ids []uint32) (uint32, bool) {
	if len(ids) == 0 {
		return 0, false
	}
	switch pt.Kind {
	case wire.PartitionByID:
		return pt.PartitionID, hasPartition(ids, pt.PartitionID)
	case wire.PartitionByKey:
		return ids[xhash.XXH32(pt.Key, 0)%uint32(len(ids))], true
	default:
		// Balanced: the counter starts at 0 and each send takes
		// next = (c + 1) % partitions_count, as semantics.md §4.1 states.
		return ids[tp.rr.Add(1)%uint32(len(ids))], true
	}
}

// send serves SEND_MESSAGES (operation 160). Every failure to resolve the
// target (unknown stream, topic or partition, a topic without partitions)
// is ResourceNotFound (20), as the reference answers on the
// partition-write path (semantics.md §4.1; docs/DESIGN.md, "Reference
// parity"); SDKs that watch for PartitionNotFound (3007) see 20 from the
// reference too.
func (p *Plane) send(x *dispatch.Exchange) {
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
	if !cat.Allowed(user, catalog.ActionSend, ref.StreamID, ref.TopicID) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	tp := p.lookupTopic(ref.Incarnation)
	if tp == nil {
		x.Deny(wire.ErrResourceNotFound.Code)
		return
	}
	pid, ok := tp.pickPartition(req.Partitioning, ids)
	if !ok {
		x.Deny(wire.ErrResourceNotFound.Code)
		return
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
	// The duplicate window identifies a request by its body. Admission
	// verified every frame checksum and the batch checksum, which binds
	// all frame checksums, so the metadata plus the batch header as
	// received (before stamping) identify the body as well as hashing all
	// of it would, without a second pass over the payloads.
	rec := batch.Bytes()
	hash := xxh3.Hash(x.Body[:len(x.Body)-len(rec)+wire.BatchHeaderSize])
	key := windowKey{client: client, request: x.Header.Request, hash: hash}
	if p.cl != nil {
		p.sendCluster(x, ref.StreamID, ref.TopicID, pid, GroupID(ref, pid), part, rec, batch.MessageCount(), key)
		return
	}
	if !part.begin(key) {
		x.Reply(binary.LittleEndian.AppendUint32(x.Scratch(), 0))
		return
	}
	res, err := p.appendRecord(part, rec, batch.MessageCount())
	part.end(key, err == nil)
	part.traffic.in(err, batch.MessageCount(), len(rec))
	if err != nil {
		p.log.Warn("append failed", "dir", part.dir, "err", err)
		switch {
		case errors.Is(err, storage.ErrRecordTooLarge), errors.Is(err, storage.ErrEmptyRecord):
			x.Deny(wire.ErrInvalidCommand.Code)
		default:
			x.Deny(wire.ErrCannotAppendMessage.Code)
		}
		return
	}
	out := x.Scratch()
	out = binary.LittleEndian.AppendUint32(out, 1)
	out = binary.LittleEndian.AppendUint32(out, ref.StreamID)
	out = binary.LittleEndian.AppendUint32(out, ref.TopicID)
	out = binary.LittleEndian.AppendUint32(out, pid)
	out = binary.LittleEndian.AppendUint64(out, res.BaseOffset)
	x.Reply(out)
}

// begin consults the duplicate window for key. It returns false for a
// recognized duplicate (answer an empty success); true means execute and
// call end afterwards. A retry of a request still in flight waits for it.
func (part *partition) begin(key windowKey) bool {
	part.winMu.Lock()
	defer part.winMu.Unlock()
	for {
		if _, busy := part.inflight[key]; !busy {
			break
		}
		part.waiters++
		part.winCond.Wait()
		part.waiters--
	}
	if part.window.Check(key.client, key.request, key.hash) != session.PartitionNew {
		return false
	}
	part.inflight[key] = struct{}{}
	return true
}

// inWindow reports whether key is a committed request of the duplicate
// window (cluster mode: checked again on the loop right before proposing).
func (part *partition) inWindow(key windowKey) bool {
	part.winMu.Lock()
	defer part.winMu.Unlock()
	return part.window.Check(key.client, key.request, key.hash) != session.PartitionNew
}

// commitWindow puts a committed request into the duplicate window.
func (part *partition) commitWindow(key windowKey) {
	part.winMu.Lock()
	part.window.Commit(key.client, key.request, key.hash)
	part.winMu.Unlock()
}

// end records the outcome of a request begun with begin: committed
// requests enter the window.
func (part *partition) end(key windowKey, committed bool) {
	part.winMu.Lock()
	if committed {
		part.window.Commit(key.client, key.request, key.hash)
	}
	delete(part.inflight, key)
	if part.waiters > 0 {
		part.winCond.Broadcast()
	}
	part.winMu.Unlock()
}
