package client

import (
	"context"
	"errors"
	"iter"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// Consumer defaults.
const (
	// DefaultPollCount is the most messages one poll asks for.
	DefaultPollCount = 100
	// DefaultPollInterval is the pause after a round of polls that found
	// nothing new (the protocol has no long poll, semantics.md §4.2).
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultCommitInterval is the period of CommitInterval.
	DefaultCommitInterval = 5 * time.Second
	// DefaultSyncInterval is how long a group assignment is used before it
	// is synced again, as the official Go SDK caches it (semantics.md §6.4).
	DefaultSyncInterval = 5 * time.Second
)

// CommitMode says when a Consumer stores its offsets on the server.
type CommitMode uint8

// Commit modes.
const (
	// CommitAfterHandle stores, for each partition, the offset of the last
	// handled message before the next poll and at Close (at-least-once).
	// A message counts as handled once the loop body has run for it (the
	// iterator) or once the next Poll is called (Poll).
	CommitAfterHandle CommitMode = iota
	// CommitNone never stores offsets; use Commit.
	CommitNone
	// CommitAfterPoll asks the server to store the offset of the last
	// returned message with every poll (auto_commit = 1; at-most-once).
	CommitAfterPoll
	// CommitInterval stores the handled offsets every commit interval and
	// at Close.
	CommitInterval
)

// StartPosition is where a Consumer starts reading a partition it has no
// position for.
type StartPosition struct{ s wire.PollingStrategy }

// StartNext continues after the consumer's (or group's) stored offset, or
// from the beginning when none is stored. It is the default.
func StartNext() StartPosition { return StartPosition{wire.NextStrategy()} }

// StartFirst starts at the oldest retained message.
func StartFirst() StartPosition { return StartPosition{wire.FirstStrategy()} }

// StartLast starts with the last poll-count messages of the partition
// (the server's Last strategy).
func StartLast() StartPosition { return StartPosition{wire.LastStrategy()} }

// StartAtOffset starts at offset.
func StartAtOffset(offset uint64) StartPosition { return StartPosition{wire.OffsetStrategy(offset)} }

// StartAtTime starts at the first message whose batch the server stored
// at or after t.
func StartAtTime(t time.Time) StartPosition {
	return StartPosition{wire.TimestampStrategy(uint64(max(t.UnixMicro(), 0)))}
}

// Assignment is a consumer-group member's set of partitions.
type Assignment struct {
	Generation uint64
	Partitions []uint32
}

// ConsumerOption configures NewConsumer.
type ConsumerOption func(*consumerOptions)

type consumerOptions struct {
	partitions     []uint32
	count          uint32
	pollInterval   time.Duration
	start          StartPosition
	commit         CommitMode
	commitInterval time.Duration
	createGroup    bool
	syncInterval   time.Duration
	keepMembership bool
	onRebalance    func(Assignment)
}

// WithConsumerPartitions restricts a single consumer to these partitions
// (default: every partition of the topic when the consumer is created).
// Consumer groups ignore it: the server assigns their partitions.
func WithConsumerPartitions(ids ...uint32) ConsumerOption {
	return func(o *consumerOptions) { o.partitions = append([]uint32(nil), ids...) }
}

// WithPollCount sets the most messages per poll (default DefaultPollCount).
func WithPollCount(n uint32) ConsumerOption { return func(o *consumerOptions) { o.count = n } }

// WithPollInterval sets the pause after a round of empty polls (default
// DefaultPollInterval).
func WithPollInterval(d time.Duration) ConsumerOption {
	return func(o *consumerOptions) { o.pollInterval = d }
}

// WithStart sets where reading starts on a partition without a position
// (default StartNext). For a group, an offset stored by the group takes
// precedence on every newly assigned partition.
func WithStart(s StartPosition) ConsumerOption { return func(o *consumerOptions) { o.start = s } }

// WithCommit sets the commit mode (default CommitAfterHandle).
func WithCommit(m CommitMode) ConsumerOption { return func(o *consumerOptions) { o.commit = m } }

// WithCommitInterval selects CommitInterval with period d.
func WithCommitInterval(d time.Duration) ConsumerOption {
	return func(o *consumerOptions) { o.commit, o.commitInterval = CommitInterval, d }
}

// WithCreateGroup creates the consumer group (named by the consumer's
// string identifier) when joining finds it missing.
func WithCreateGroup() ConsumerOption { return func(o *consumerOptions) { o.createGroup = true } }

// WithSyncInterval sets how long a group assignment is cached before it
// is synced again (default DefaultSyncInterval).
func WithSyncInterval(d time.Duration) ConsumerOption {
	return func(o *consumerOptions) { o.syncInterval = d }
}

// WithKeepMembership makes Close leave the group membership in place
// (by default Close leaves the group so its partitions move at once).
func WithKeepMembership() ConsumerOption { return func(o *consumerOptions) { o.keepMembership = true } }

// WithRebalanceHandler calls f, from the consuming goroutine, whenever the
// group assignment changes (including the first one).
func WithRebalanceHandler(f func(Assignment)) ConsumerOption {
	return func(o *consumerOptions) { o.onRebalance = f }
}

// ReceivedMessage is one polled message. Payload and Headers are not
// reused by the client and may be kept.
type ReceivedMessage struct {
	Partition uint32
	Offset    uint64
	ID        wire.Uint128
	// Timestamp is the broker time (µs since the epoch) the batch was stored.
	Timestamp uint64
	// OriginTimestamp is the producer time (µs since the epoch).
	OriginTimestamp uint64
	// Checksum is the frame checksum as stored.
	Checksum uint64
	Payload  []byte
	// Headers is the encoded user-headers block (UserHeaders decodes it).
	Headers []byte
	// CurrentOffset is the partition's newest offset when it was polled.
	CurrentOffset uint64
}

// UserHeaders decodes the message's user headers.
func (m *ReceivedMessage) UserHeaders() (wire.UserHeaders, error) {
	var h wire.UserHeaders
	if len(m.Headers) == 0 {
		return nil, nil
	}
	err := h.Decode(m.Headers)
	return h, err
}

// ErrConsumerClosed is returned by a Consumer after Close.
var ErrConsumerClosed = errors.New("client: consumer closed")

// Consumer reads a topic, either as a single consumer (wire.ConsumerSingle:
// its own offsets, the partitions it is given) or as a consumer-group
// member (wire.ConsumerGroupKind: the server assigns partitions; semantics.md
// §6). It polls its partitions round robin, continues each from the last
// message it returned, stores offsets per its commit mode, and, in a
// group, re-syncs its assignment periodically and whenever the server
// says it changed (ConsumerGroupMemberNotFound 5006, joining again unless
// the member left; ConsumerGroupPartitionNotOwned 5009; an empty poll with
// partition 0xFFFFFFFF).
//
// A Consumer is used from one goroutine at a time; cancel the context to
// stop Messages, then Close.
type Consumer struct {
	c             *Client
	stream, topic wire.Identifier
	consumer      wire.Consumer
	group         bool
	opts          consumerOptions

	parts      []uint32          // partitions to poll
	pos        map[uint32]uint64 // next offset per partition, when known
	handled    map[uint32]uint64 // last handled offset not yet stored
	rr         int
	emptyRound int
	generation uint64
	synced     bool
	lastSync   time.Time
	lastCommit time.Time
	pendingAck []ReceivedMessage // last Poll's messages, handled at the next Poll
	closed     bool
}

// NewConsumer returns a consumer of stream/topic acting as consumer: a
// single consumer (wire.SingleConsumer) or a group
// (wire.GroupConsumer, joined now, created first with WithCreateGroup).
func (c *Client) NewConsumer(ctx context.Context, stream, topic wire.Identifier, consumer wire.Consumer, opts ...ConsumerOption) (*Consumer, error) {
	o := consumerOptions{
		count:          DefaultPollCount,
		pollInterval:   DefaultPollInterval,
		start:          StartNext(),
		commit:         CommitAfterHandle,
		commitInterval: DefaultCommitInterval,
		syncInterval:   DefaultSyncInterval,
	}
	for _, f := range opts {
		f(&o)
	}
	if o.count == 0 {
		o.count = DefaultPollCount
	}
	if o.commitInterval <= 0 {
		o.commitInterval = DefaultCommitInterval
	}
	if err := validateTarget(consumer, stream, topic); err != nil {
		return nil, err
	}
	co := &Consumer{
		c: c, stream: stream, topic: topic, consumer: consumer, opts: o,
		group:      consumer.Kind == wire.ConsumerGroupKind,
		pos:        map[uint32]uint64{},
		handled:    map[uint32]uint64{},
		lastCommit: time.Now(),
	}
	switch {
	case co.group:
		if err := co.join(ctx); err != nil {
			return nil, err
		}
	case len(o.partitions) > 0:
		co.parts = o.partitions
	default:
		t, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			return nil, err
		}
		for _, p := range t.Partitions {
			co.parts = append(co.parts, p.ID)
		}
		if len(co.parts) == 0 {
			return nil, wire.ErrNoPartitions
		}
	}
	return co, nil
}

// Assignment returns the partitions the consumer polls and, for a group,
// the generation of that assignment.
func (co *Consumer) Assignment() Assignment {
	return Assignment{Generation: co.generation, Partitions: slices.Clone(co.parts)}
}

// Messages returns an iterator over the topic's messages that polls until
// ctx ends (the iteration then stops without an error). Errors are
// yielded with a nil message; iteration continues after them when the
// loop does, except after ErrConsumerClosed, ErrClosed or a refused
// login. A message counts as handled when the loop body returns for it.
func (co *Consumer) Messages(ctx context.Context) iter.Seq2[*ReceivedMessage, error] {
	return func(yield func(*ReceivedMessage, error) bool) {
		for ctx.Err() == nil {
			// Store what the previous batch handled; a failure is reported
			// but does not stop polling (the offsets stay pending).
			if err := co.autoCommit(ctx); err != nil {
				if ctx.Err() != nil || !yield(nil, err) || fatalConsumerError(err) {
					return
				}
			}
			batch, err := co.poll(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if !yield(nil, err) || fatalConsumerError(err) {
					return
				}
				if sleep(ctx, co.opts.pollInterval) != nil {
					return
				}
				continue
			}
			if len(batch) == 0 {
				if co.emptyRound >= max(len(co.parts), 1) {
					co.emptyRound = 0
					if sleep(ctx, co.opts.pollInterval) != nil {
						return
					}
				}
				continue
			}
			for i := range batch {
				m := &batch[i]
				more := yield(m, nil)
				co.markHandled(m)
				if !more {
					if co.opts.commit == CommitAfterHandle && ctx.Err() == nil {
						co.commitHandled(ctx)
					}
					return
				}
			}
		}
	}
}

// fatalConsumerError reports errors after which polling cannot succeed.
func fatalConsumerError(err error) bool {
	return errors.Is(err, ErrConsumerClosed) || errors.Is(err, ErrClosed) || terminalLoginError(err) && isEviction(err)
}

func isEviction(err error) bool {
	_, ok := errors.AsType[*wire.EvictionError](err)
	return ok
}

// Poll performs one poll of the next partition and returns its messages
// (none when the partition had nothing new). The messages of the previous
// Poll count as handled when Poll is called again.
func (co *Consumer) Poll(ctx context.Context) ([]ReceivedMessage, error) {
	for i := range co.pendingAck {
		co.markHandled(&co.pendingAck[i])
	}
	co.pendingAck = nil
	if err := co.autoCommit(ctx); err != nil {
		return nil, err
	}
	batch, err := co.poll(ctx)
	co.pendingAck = batch
	return batch, err
}

// Commit stores the offset of m as its partition's position (for the
// consumer or group), whatever the commit mode.
func (co *Consumer) Commit(ctx context.Context, m *ReceivedMessage) error {
	if co.closed {
		return ErrConsumerClosed
	}
	if err := co.store(ctx, m.Partition, m.Offset); err != nil {
		return err
	}
	if h, ok := co.handled[m.Partition]; ok && h <= m.Offset {
		delete(co.handled, m.Partition)
	}
	return nil
}

// Close stores the handled offsets (modes other than CommitNone and
// CommitAfterPoll) and leaves the group unless WithKeepMembership. The
// client stays open.
func (co *Consumer) Close(ctx context.Context) error {
	if co.closed {
		return nil
	}
	for i := range co.pendingAck {
		co.markHandled(&co.pendingAck[i])
	}
	co.pendingAck = nil
	var errs []error
	if co.opts.commit == CommitAfterHandle || co.opts.commit == CommitInterval {
		errs = append(errs, co.commitHandled(ctx))
	}
	if co.group && !co.opts.keepMembership {
		err := co.c.LeaveConsumerGroup(ctx, co.stream, co.topic, co.consumer.ID)
		if !errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
			errs = append(errs, err)
		}
	}
	co.closed = true
	return errors.Join(errs...)
}

// markHandled records m as handled.
func (co *Consumer) markHandled(m *ReceivedMessage) {
	if co.opts.commit == CommitNone || co.opts.commit == CommitAfterPoll {
		return
	}
	if h, ok := co.handled[m.Partition]; !ok || m.Offset > h {
		co.handled[m.Partition] = m.Offset
	}
}

// autoCommit stores handled offsets when the commit mode says so.
func (co *Consumer) autoCommit(ctx context.Context) error {
	switch co.opts.commit {
	case CommitAfterHandle:
		return co.commitHandled(ctx)
	case CommitInterval:
		if time.Since(co.lastCommit) >= co.opts.commitInterval {
			return co.commitHandled(ctx)
		}
	}
	return nil
}

// commitHandled stores every handled offset not yet stored. In a group,
// a store refused because the member no longer owns the partition (the
// server forgot the member, e.g. after a reconnect ended its session)
// is not an error: the offset stays pending and the assignment is synced
// again before the next poll, which joins the group again.
func (co *Consumer) commitHandled(ctx context.Context) error {
	co.lastCommit = time.Now()
	var errs []error
	for _, p := range sortedKeys(co.handled) {
		off := co.handled[p]
		if err := co.store(ctx, p, off); err != nil {
			if co.group && groupFenced(err) {
				co.synced = false
				continue
			}
			errs = append(errs, err)
			continue
		}
		delete(co.handled, p)
	}
	return errors.Join(errs...)
}

// groupFenced reports a group offset write refused because the caller is
// not (or no longer) the partition's owner: 5006, 5009, or 20, which the
// server uses for group fence failures on stores (semantics.md §5).
func groupFenced(err error) bool {
	return errors.Is(err, wire.ErrConsumerGroupMemberNotFound) || errors.Is(err, wire.ErrConsumerGroupPartitionNotOwned) ||
		errors.Is(err, wire.ErrResourceNotFound)
}

func (co *Consumer) store(ctx context.Context, partition uint32, offset uint64) error {
	return co.c.StoreConsumerOffset(ctx, co.consumer, co.stream, co.topic, wire.SomePartition(partition), offset)
}

func sortedKeys(m map[uint32]uint64) []uint32 {
	out := make([]uint32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
