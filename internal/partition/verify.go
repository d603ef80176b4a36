package partition

import (
	"errors"
	"path/filepath"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// VERIFY_PARTITION (`iggo partition verify`): the scrub of scrub.go run on
// demand and unthrottled on the named partition, or on every partition of
// the topic, as stored on the node that receives the request. In cluster
// mode each node verifies its own replicas: a request is never forwarded,
// since the point is the state of this node's disk; a partition this node
// holds no replica of is answered wire.VerifyNotHeld (the partition map,
// `iggo cluster partitions`, names the nodes that hold it). The caller
// needs manage_topic on the topic (root may do anything).

// verify answers VERIFY_PARTITION.
func (p *Plane) verify(x *dispatch.Exchange) {
	var req wire.VerifyPartition
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	cat := p.catalog()
	if cat == nil {
		x.Deny(wire.ErrFeatureUnavailable.Code)
		return
	}
	b, ok := x.Conn.Binding()
	if !ok {
		x.Deny(wire.ErrUnauthenticated.Code)
		return
	}
	ref, ids, err := cat.ResolveTopic(req.StreamID, req.TopicID)
	if err != nil {
		x.Deny(wire.CodeOf(err))
		return
	}
	if !cat.Allowed(uint32(b.UserID), catalog.ActionManageTopic, ref.StreamID, ref.TopicID) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	if req.Partition.Present {
		if !has(ids, req.Partition.ID) {
			x.Deny(wire.ErrPartitionNotFound.Code)
			return
		}
		ids = []uint32{req.Partition.ID}
	}
	var reply wire.VerifyPartitionReply
	for _, id := range ids {
		reply.Partitions = append(reply.Partitions, p.verifyOne(x, ref, id))
	}
	x.Reply(reply.AppendTo(x.Scratch()))
}

// verifyOne verifies partition id of ref as stored here.
func (p *Plane) verifyOne(x *dispatch.Exchange, ref catalog.TopicRef, id uint32) wire.PartitionVerify {
	out := wire.PartitionVerify{PartitionID: id}
	part := p.lookup(ref.Incarnation, id)
	switch {
	case part == nil:
		out.Status = wire.VerifyNotHeld
		return out
	case part.log == nil:
		out.Status = wire.VerifyStopped
		if part.broken != nil {
			out.Error = part.broken.Error()
		}
		return out
	}
	rep, err := p.scrubPartition(x.Conn.Context(), ref, part, 0)
	out.Segments = uint32(min(rep.Segments, int(^uint32(0))))
	out.Records = uint64(max(rep.Records, 0))
	out.Bytes = uint64(max(rep.Bytes, 0))
	damaged := rep.Damaged
	if err != nil {
		out.Status = wire.VerifyFailed
		out.Error = err.Error()
		if errors.Is(err, storage.ErrClosed) {
			out.Error = "the partition was closed (deleted?) during the verification"
		}
		damaged = part.log.Damaged()
	}
	for _, d := range damaged {
		out.Damaged = append(out.Damaged, wire.DamagedRange{
			First: d.First, Last: d.Last, Pos: uint64(max(d.Pos, 0)), Len: uint64(max(d.Len, 0)),
			File: p.dataPath(d.Path), Reason: d.Reason,
		})
	}
	return out
}

// dataPath is path relative to the data directory (the parent of
// Options.Dir), as an operator finds it under system.path; path itself
// when it lies elsewhere.
func (p *Plane) dataPath(path string) string {
	rel, err := filepath.Rel(filepath.Dir(p.opts.Dir), path)
	if err != nil || !filepath.IsLocal(rel) {
		return path
	}
	return filepath.ToSlash(rel)
}
