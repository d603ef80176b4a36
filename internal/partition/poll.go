package partition

import (
	"context"
	"encoding/binary"
	"errors"
	"math"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// currentOffset is C of semantics.md §4.2: the last committed offset, 0
// when the partition is empty.
func currentOffset(next uint64) uint64 {
	if next == 0 {
		return 0
	}
	return next - 1
}

// poll serves POLL_MESSAGES (code 100).
func (p *Plane) poll(x *dispatch.Exchange) { p.pollAt(x, nil) }

// pollAt serves a poll received from a client (fwd nil) or forwarded by
// another node (forward.go).
func (p *Plane) pollAt(x *dispatch.Exchange, fwd *remoteRequest) {
	var req wire.PollMessages
	if err := req.Decode(x.Body); err != nil {
		// semantics.md §4.2: an undecodable request gets the empty head.
		x.Reply(wire.AppendPollReplyHead(x.Scratch(), 0, 0, 0))
		return
	}
	if p.routeRead(x, fwd, req.StreamID, req.TopicID, req.Partition) {
		return
	}
	t, st, code := p.resolve(x, req.Consumer, req.StreamID, req.TopicID, req.Partition,
		resolveOpts{action: catalog.ActionPoll, groupAccess: catalog.GroupPoll})
	switch st {
	case resolvedDeny:
		x.Deny(code)
		return
	case resolvedResync:
		x.Reply(wire.AppendPollReplyHead(x.Scratch(), wire.PollResyncPartition, 0, 0))
		return
	case resolvedNothing:
		x.Reply(wire.AppendPollReplyHead(x.Scratch(), 0, 0, 0))
		return
	}
	part := t.part
	if part.log == nil {
		x.Deny(wire.ErrCannotReadMessage.Code)
		return
	}
	first, next := part.bounds()
	empty := func() {
		x.Reply(wire.AppendPollReplyHead(x.Scratch(), part.id, currentOffset(next), 0))
	}
	if req.Count == 0 || first == next {
		empty()
		return
	}
	count := uint64(req.Count)
	var start uint64
	switch req.Strategy.Kind {
	case wire.PollOffset:
		start = req.Strategy.Value
	case wire.PollTimestamp:
		off, ok, err := part.offsetForTimestamp(x.Conn.Context(), req.Strategy.Value)
		if err != nil || !ok {
			empty()
			return
		}
		start = off
	case wire.PollFirst:
		start = first
	case wire.PollLast:
		start = next - min(count, next)
	case wire.PollNext:
		if stored, ok := part.log.Offsets().Get(t.kind, t.id); ok {
			if stored == math.MaxUint64 {
				empty()
				return
			}
			start = stored + 1
		}
	}
	if start >= next {
		empty()
		return
	}
	r := getPollReply()
	last, n, err := p.fill(x.Conn.Context(), r, part, start, count, next)
	if err != nil || n == 0 {
		r.Release()
		if errors.Is(err, errUnreadable) || remoteReadFailed(err) {
			if remoteReadFailed(err) {
				p.log.Warn("poll: remote tier read failed", "dir", part.dir, "err", err)
			}
			x.Deny(wire.ErrCannotReadMessage.Code)
			return
		}
		if err != nil {
			p.log.Warn("poll read failed", "dir", part.dir, "err", err)
		}
		empty()
		return
	}
	binary.LittleEndian.PutUint32(r.head[12:], uint32(n))
	group := t.kind == storage.KindGroup
	if group {
		// Record the in-flight mark; a rebalance that ran while this poll
		// was reading has taken the partition away, and then nothing
		// read is delivered (semantics.md §6.3, §4.2 RESYNC).
		if err := p.catalog().GroupPolled(t.ref, t.id, t.client, part.id, last); err != nil {
			r.Release()
			x.Reply(wire.AppendPollReplyHead(x.Scratch(), wire.PollResyncPartition, 0, 0))
			return
		}
	}
	if req.AutoCommit {
		w := commit.Write{Kind: commit.OffsetAdvance, Consumer: t.kind, ID: t.id, Offset: last, Async: true}
		if group {
			w.Applied = func() {
				// Report what is stored now: auto-commit never moves the
				// offset backwards, so it may be beyond last.
				stored, _ := part.log.Offsets().Get(t.kind, t.id)
				p.catalog().GroupCommitted(t.ref, t.id, t.client, part.id, stored)
			}
		}
		part.commit.Commit(x.Conn.Context(), w)
	}
	part.traffic.out(n, int64(len(r.head)-wire.PollReplyHeadSize)+r.n)
	x.ReplyTail(r.head, r)
}

// fill reads up to count messages from start into r: the reply head with a
// zero count, whole records as extents, and the edge records sliced. It
// returns the last returned offset and the number of messages. Offsets
// storage does not return (removed by retention, or quarantined because
// their records are damaged) are skipped: a poll starting at them gets
// count messages from the next stored one, and one reaching them stops
// before them (storage.Partition.Read).
func (p *Plane) fill(ctx context.Context, r *pollReply, part *partition, start, count, next uint64) (last, n uint64, err error) {
	exts, target, err := p.readExtents(ctx, r, part, start, count, next)
	if err != nil || len(exts) == 0 {
		return 0, 0, err
	}
	if first := exts[0].FirstOffset; first > start {
		// The offsets from start were removed by retention or are
		// quarantined (damaged records): storage skipped them, and the
		// poll's count starts after them, as storage's does.
		start, target = first, pollTarget(first, count)
	}
	if part.crypt != nil {
		return p.fillDecrypted(r, part, exts, start, target)
	}
	begin := max(start, exts[0].FirstOffset)
	end := min(exts[len(exts)-1].EndOffset, target)
	if end <= begin {
		return 0, 0, nil
	}
	for i := range exts {
		e := &exts[i]
		pos, length := e.Pos, e.Len
		if i == 0 && e.FirstOffset < start {
			// The poll starts inside the first record: re-head it.
			v, err := r.readRecord(e, pos)
			if err != nil {
				return 0, 0, err
			}
			first, k := v.Select(start, uint32(min(target-start, math.MaxUint32)))
			r.head = v.AppendSlice(r.head, first, k)
			pos += int64(v.Len())
			length -= int64(v.Len())
		}
		if i == len(exts)-1 && e.EndOffset > target && length > 0 {
			// The poll ends inside the last record: re-head it.
			v, err := r.readRecord(e, e.LastPos)
			if err != nil {
				return 0, 0, err
			}
			_, k := v.Select(e.LastOffset, uint32(min(target-e.LastOffset, math.MaxUint32)))
			r.post = v.AppendSlice(r.post[:0], 0, k)
			length -= e.Pos + e.Len - e.LastPos
		}
		if length > 0 {
			m := *e
			m.Pos, m.Len = pos, length
			r.mids = append(r.mids, m)
			r.n += length
		}
	}
	r.n += int64(len(r.post))
	return end - 1, end - begin, nil
}

// readExtents finds the stored records of a poll of count messages from
// start (bounded by the frame limit) and starts the reply head; target is
// the first offset past the poll (math.MaxUint64 when unbounded). No
// extents means nothing to return.
func (p *Plane) readExtents(ctx context.Context, r *pollReply, part *partition, start, count, next uint64) (exts []storage.Extent, target uint64, err error) {
	maxBytes := p.opts.MaxFrameBytes - wire.HeaderSize - wire.PollReplyHeadSize
	if err := part.read(ctx, &r.rr, start, count, maxBytes); err != nil {
		return nil, 0, err
	}
	r.head = wire.AppendPollReplyHead(r.head[:0], part.id, currentOffset(next), 0)
	return r.rr.Extents, pollTarget(start, count), nil
}

// pollTarget is the first offset past a poll of count messages from
// start (math.MaxUint64 when unbounded).
func pollTarget(start, count uint64) uint64 {
	if count < math.MaxUint64-start {
		return start + count
	}
	return math.MaxUint64
}
