package client

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// poll polls the next partition round robin and returns its messages.
// In a group it first syncs the assignment when due, and a fenced poll
// (5006, 5009, or the 0xFFFFFFFF resync sentinel) marks the assignment
// for a re-sync and returns no messages.
func (co *Consumer) poll(ctx context.Context) ([]ReceivedMessage, error) {
	if co.closed {
		return nil, ErrConsumerClosed
	}
	if co.group && (!co.synced || time.Since(co.lastSync) >= co.opts.syncInterval) {
		if err := co.sync(ctx); err != nil {
			return nil, err
		}
	}
	if len(co.parts) == 0 {
		co.emptyRound++
		return nil, nil
	}
	p := co.parts[co.rr%len(co.parts)]
	co.rr++
	strategy, err := co.strategy(ctx, p)
	if err != nil {
		return nil, err
	}
	res, err := co.c.PollMessages(ctx, wire.PollMessages{
		Consumer:   co.consumer,
		StreamID:   co.stream,
		TopicID:    co.topic,
		Partition:  wire.SomePartition(p),
		Strategy:   strategy,
		Count:      co.opts.count,
		AutoCommit: co.opts.commit == CommitAfterPoll,
	})
	switch {
	case co.group && (errors.Is(err, wire.ErrConsumerGroupMemberNotFound) || errors.Is(err, wire.ErrConsumerGroupPartitionNotOwned)):
		co.synced = false
		return nil, nil
	case err != nil:
		return nil, err
	case co.group && res.PartitionID == wire.PollResyncPartition:
		co.synced = false
		return nil, nil
	}
	if res.Count == 0 {
		co.emptyRound++
		return nil, nil
	}
	co.emptyRound = 0
	out := make([]ReceivedMessage, 0, res.Count)
	it := res.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		out = append(out, ReceivedMessage{
			Partition:       p,
			Offset:          m.Offset,
			ID:              m.ID,
			Timestamp:       m.Timestamp,
			OriginTimestamp: m.OriginTimestamp,
			Checksum:        m.Checksum,
			Payload:         m.Payload,
			Headers:         m.UserHeaders,
			CurrentOffset:   res.CurrentOffset,
		})
	}
	if n := len(out); n > 0 {
		co.pos[p] = out[n-1].Offset + 1
	}
	return out, nil
}

// strategy returns how partition p is polled: from the next offset after
// the last message returned, or, for a partition without a position, the
// start position; a group first looks for an offset the group stored.
func (co *Consumer) strategy(ctx context.Context, p uint32) (wire.PollingStrategy, error) {
	if next, ok := co.pos[p]; ok {
		return wire.OffsetStrategy(next), nil
	}
	start := co.opts.start.s
	if start.Kind == 0 {
		start = wire.NextStrategy()
	}
	if !co.group || start.Kind == wire.PollNext {
		return start, nil
	}
	off, err := co.c.GetConsumerOffset(ctx, co.consumer, co.stream, co.topic, wire.SomePartition(p))
	if err != nil {
		return wire.PollingStrategy{}, err
	}
	if off != nil {
		next := off.StoredOffset + 1
		co.pos[p] = next
		return wire.OffsetStrategy(next), nil
	}
	return start, nil
}

// join makes the client a member of the group, creating the group first
// when it is missing and WithCreateGroup was given.
func (co *Consumer) join(ctx context.Context) error {
	err := co.c.JoinConsumerGroup(ctx, co.stream, co.topic, co.consumer.ID)
	if errors.Is(err, wire.ErrConsumerGroupIDNotFound) && co.opts.createGroup && !co.consumer.ID.IsNumeric() {
		_, err = co.c.CreateConsumerGroup(ctx, co.stream, co.topic, co.consumer.ID.Str)
		if errors.Is(err, wire.ErrConsumerGroupNameAlreadyExists) {
			err = nil // created meanwhile by another member
		}
		if err == nil {
			err = co.c.JoinConsumerGroup(ctx, co.stream, co.topic, co.consumer.ID)
		}
	}
	return err
}

// sync fetches the member's assignment (joining again when the server no
// longer knows the member, e.g. after a reconnect ended the old session)
// and applies it.
func (co *Consumer) sync(ctx context.Context) error {
	a, err := co.c.SyncConsumerGroup(ctx, co.stream, co.topic, co.consumer.ID)
	if errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
		if err := co.join(ctx); err != nil {
			return err
		}
		a, err = co.c.SyncConsumerGroup(ctx, co.stream, co.topic, co.consumer.ID)
	}
	if err != nil {
		return err
	}
	parts := slices.Clone(a.Partitions)
	slices.Sort(parts)
	first := co.parts == nil
	co.synced, co.lastSync = true, time.Now()
	if !first && co.generation == a.Generation && slices.Equal(parts, co.parts) {
		return nil
	}
	// Partitions that leave: store what was handled there (the server
	// still accepts commits for a partition pending revocation), then
	// forget their positions.
	var errs []error
	for p := range co.handled {
		if !slices.Contains(parts, p) && co.opts.commit != CommitNone && co.opts.commit != CommitAfterPoll {
			if err := co.store(ctx, p, co.handled[p]); err != nil && !groupFenced(err) {
				errs = append(errs, err)
			}
			delete(co.handled, p)
		}
	}
	for p := range co.pos {
		if !slices.Contains(parts, p) {
			delete(co.pos, p)
		}
	}
	if parts == nil {
		parts = []uint32{}
	}
	co.parts, co.generation, co.rr, co.emptyRound = parts, a.Generation, 0, 0
	if co.opts.onRebalance != nil {
		co.opts.onRebalance(Assignment{Generation: a.Generation, Partitions: slices.Clone(parts)})
	}
	return errors.Join(errs...)
}
