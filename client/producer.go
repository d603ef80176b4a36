package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// Producer defaults.
const (
	// DefaultBatchMessages is the most messages one SendMessages carries.
	DefaultBatchMessages = 1000
	// DefaultBatchBytes is the most encoded message bytes in one batch.
	DefaultBatchBytes = 1 << 20
	// DefaultLinger is how long a batch waits for more messages once its
	// first message is buffered.
	DefaultLinger = 5 * time.Millisecond
	// DefaultBufferBytes bounds the encoded bytes of buffered and in-flight
	// messages of one Producer.
	DefaultBufferBytes = 64 << 20
	// DefaultMaxInFlight is the number of batches per partition sent
	// before the first is confirmed: one keeps every partition in Send
	// order even across retries, and the client still pipelines batches
	// of different partitions on its connection.
	DefaultMaxInFlight = 1
)

// Producer errors.
var (
	// ErrProducerClosed is returned by Send after Close.
	ErrProducerClosed = errors.New("client: producer closed")
	// ErrBufferFull is returned by Send with WithFailWhenFull when the
	// byte budget has no room.
	ErrBufferFull = errors.New("client: producer buffer full")
	// ErrMessageTooLarge is returned by Send for a message whose encoded
	// size exceeds the batch byte limit or the buffer budget.
	ErrMessageTooLarge = errors.New("client: message larger than the producer's batch or buffer limit")
)

// Message is a message to produce.
type Message struct {
	// ID is the message id; zero gets a random UUIDv4.
	ID wire.Uint128
	// Key, when non-empty and the producer has neither a fixed partition
	// nor a partitioner, selects the partition XXH32(Key, 0) %
	// partitions, the mapping of the official SDKs (semantics.md §4.1).
	// The key is not stored with the message.
	Key []byte
	// Payload is the message body, copied by Send.
	Payload []byte
	// Headers are the user headers, encoded by Send.
	Headers wire.UserHeaders
	// Timestamp is the producer time; zero means the time of Send.
	Timestamp time.Time
}

// DeliveryReport is the outcome of one batch.
type DeliveryReport struct {
	Partition uint32
	// Messages is the number of messages in the batch.
	Messages int
	// BaseOffset is the offset of the batch's first message when the
	// server reported one (HasOffset). A server with a partition
	// duplicate window answers a resent batch it already stored without
	// an offset.
	BaseOffset uint64
	HasOffset  bool
	// Err is nil when the batch was stored.
	Err error
}

// DeliveryError reports a batch the server did not store.
type DeliveryError struct {
	Partition uint32
	Messages  int
	Err       error
}

// Error implements the error interface.
func (e *DeliveryError) Error() string {
	return "client: delivery of " + itoa(e.Messages) + " messages to partition " + itoa(int(e.Partition)) + " failed: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *DeliveryError) Unwrap() error { return e.Err }

// Partitioner picks the partition of a message among partitions
// partitions (ids 0..partitions-1); the result is taken modulo partitions.
type Partitioner func(m *Message, partitions uint32) uint32

// ProducerOption configures NewProducer.
type ProducerOption func(*producerOptions)

type producerOptions struct {
	batchMessages int
	batchBytes    int
	linger        time.Duration
	bufferBytes   int
	failWhenFull  bool
	fixed         bool
	partition     uint32
	partitioner   Partitioner
	maxInFlight   int
	onDelivery    func(DeliveryReport)
	count         uint32
}

// WithBatchMessages sets the most messages per batch (default
// DefaultBatchMessages).
func WithBatchMessages(n int) ProducerOption { return func(o *producerOptions) { o.batchMessages = n } }

// WithBatchBytes sets the most encoded message bytes per batch (48-byte
// frame header + payload + user headers each; default DefaultBatchBytes).
// A batch is sent as soon as it is full.
func WithBatchBytes(n int) ProducerOption { return func(o *producerOptions) { o.batchBytes = n } }

// WithLinger sets how long a batch waits for more messages after its first
// (default DefaultLinger). Zero sends a batch as soon as its partition has
// a free in-flight slot, so messages only accumulate while earlier
// batches are on the wire.
func WithLinger(d time.Duration) ProducerOption { return func(o *producerOptions) { o.linger = d } }

// WithBufferBytes bounds the producer's memory: the encoded bytes of
// messages accepted by Send and not yet confirmed (default
// DefaultBufferBytes; at least the batch byte limit). When the budget is
// used up, the open batches are sent at once and Send blocks until
// batches are confirmed, or fails with ErrBufferFull under
// WithFailWhenFull. Beyond the budget, each partition's batch buffer may
// hold up to its capacity growth (less than one batch) and the request
// headers.
func WithBufferBytes(n int) ProducerOption { return func(o *producerOptions) { o.bufferBytes = n } }

// WithFailWhenFull makes Send return ErrBufferFull instead of blocking
// when the buffer budget is used up.
func WithFailWhenFull() ProducerOption { return func(o *producerOptions) { o.failWhenFull = true } }

// WithPartition sends every message to one partition. The producer then
// does not read the topic's partition count.
func WithPartition(id uint32) ProducerOption {
	return func(o *producerOptions) { o.fixed, o.partition = true, id }
}

// WithPartitionCount spreads messages over partitions 0..n-1 without
// reading the topic (useful for a user that may send but not read
// topics). The count is still re-read after a send hits a missing
// partition.
func WithPartitionCount(n uint32) ProducerOption { return func(o *producerOptions) { o.count = n } }

// WithPartitioner picks partitions with f instead of the default rule
// (key hash for keyed messages, balanced otherwise).
func WithPartitioner(f Partitioner) ProducerOption {
	return func(o *producerOptions) { o.partitioner = f }
}

// WithMaxInFlight sets how many batches per partition may await
// confirmation (default DefaultMaxInFlight). With 1, messages of a
// partition are stored in Send order even when a batch is retried; with
// more, a batch retried after a transient rejection (57/58) can land
// after batches sent behind it. A reconnect keeps the order either way.
func WithMaxInFlight(n int) ProducerOption { return func(o *producerOptions) { o.maxInFlight = n } }

// WithDeliveryHandler calls f with the outcome of every batch, from the
// producer's sender goroutines; f must not block for long.
func WithDeliveryHandler(f func(DeliveryReport)) ProducerOption {
	return func(o *producerOptions) { o.onDelivery = f }
}

// maxRecordedErrors bounds the delivery errors kept for Flush.
const maxRecordedErrors = 16

// Producer sends messages to one topic in batches, in the background.
//
// Send encodes messages straight into per-partition batches (copying
// payloads, so the caller may reuse its buffers at once). A batch is sent
// when it holds the configured count or bytes, when its linger time has
// passed, or on Flush; each partition has its own sender with up to
// MaxInFlight batches awaiting confirmation on the client's connection.
// Partitions are resolved client-side: a fixed partition, a Partitioner,
// XXH32(key) % partitions for keyed messages, or balanced (round robin
// over partitions, one batch at a time) for the rest; the request then
// names the partition (partitioning kind 2), as the official SDKs do.
//
// Memory is bounded by the buffer budget (WithBufferBytes). Delivery
// failures are reported to the delivery handler and returned by the next
// Flush or Close. A Producer is safe for concurrent use.
type Producer struct {
	c             *Client
	stream, topic wire.Identifier
	opts          producerOptions
	budget        *budget
	abort         chan struct{} // closed when Close gives up waiting
	wg            sync.WaitGroup
	frames        sync.Pool // *[]byte: buffers of completed batches

	mu          sync.Mutex
	partitions  uint32                // guarded by mu: partition count
	parts       map[uint32]*partState // guarded by mu
	balanced    uint32                // guarded by mu: partition of keyless messages
	rr          uint32                // guarded by mu: balanced round-robin counter
	outstanding int                   // guarded by mu: messages accepted and not completed
	idle        []chan struct{}       // guarded by mu: Flush waiters
	errs        []error               // guarded by mu: delivery errors since the last Flush
	lost        int                   // guarded by mu: errors not kept in errs
	closed      bool                  // guarded by mu
	headerBuf   []byte                // guarded by mu: scratch for user headers
	refreshing  bool                  // guarded by mu
}

// NewProducer returns a producer for stream/topic. Unless WithPartition
// or WithPartitionCount is given it reads the topic (GET_TOPIC) for its
// partition count.
func (c *Client) NewProducer(ctx context.Context, stream, topic wire.Identifier, opts ...ProducerOption) (*Producer, error) {
	o := producerOptions{
		batchMessages: DefaultBatchMessages,
		batchBytes:    DefaultBatchBytes,
		linger:        DefaultLinger,
		bufferBytes:   DefaultBufferBytes,
		maxInFlight:   DefaultMaxInFlight,
	}
	for _, f := range opts {
		f(&o)
	}
	o.batchMessages = max(o.batchMessages, 1)
	o.batchBytes = min(max(o.batchBytes, wire.MessageHeaderSize+1), maxBatchBytes)
	o.bufferBytes = max(o.bufferBytes, o.batchBytes)
	o.maxInFlight = max(o.maxInFlight, 1)
	o.linger = max(o.linger, 0)
	if err := stream.Validate(); err != nil {
		return nil, err
	}
	if err := topic.Validate(); err != nil {
		return nil, err
	}
	p := &Producer{
		c: c, stream: stream, topic: topic, opts: o,
		budget: newBudget(o.bufferBytes),
		abort:  make(chan struct{}),
		parts:  map[uint32]*partState{},
	}
	switch {
	case o.fixed:
	case o.count > 0:
		p.partitions = o.count
	default:
		t, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			return nil, err
		}
		if t.PartitionsCount == 0 {
			return nil, wire.ErrNoPartitions
		}
		p.partitions = t.PartitionsCount
	}
	return p, nil
}

// maxBatchBytes keeps a batch, with its headers, under the frame limit.
const maxBatchBytes = wire.MaxFrameSize - 64<<10

// Partitions returns the partition count the producer spreads messages
// over (0 with WithPartition).
func (p *Producer) Partitions() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.partitions
}

// BufferedBytes returns the bytes of the buffer budget in use.
func (p *Producer) BufferedBytes() int { return p.budget.inUse() }

// messageSize is the encoded size of m in a batch.
func messageSize(m *Message) int {
	return wire.MessageHeaderSize + len(m.Payload) + m.Headers.EncodedLen()
}

// Send buffers msgs for sending and returns once they are copied into
// batches; it does not wait for the server. It blocks while the buffer
// budget is used up (until ctx ends), or returns ErrBufferFull under
// WithFailWhenFull. A message that can never fit returns
// ErrMessageTooLarge, and an invalid one (payload or headers over the
// protocol limits, malformed headers) its wire error; in both cases no
// message of the call is buffered.
func (p *Producer) Send(ctx context.Context, msgs ...Message) error {
	total := 0
	for i := range msgs {
		m := &msgs[i]
		n := messageSize(m)
		if n > p.opts.batchBytes || n > p.opts.bufferBytes {
			return ErrMessageTooLarge
		}
		if len(m.Payload) > wire.MaxPayloadSize {
			return wire.ErrTooBigMessagePayload
		}
		if len(m.Headers) > 0 {
			if err := m.Headers.Validate(); err != nil {
				return err
			}
		}
		total += n
	}
	if total == 0 {
		return nil
	}
	// Take the budget for the whole call when it fits, else message by message.
	if total <= p.opts.bufferBytes {
		if err := p.reserve(ctx, total); err != nil {
			return err
		}
		return p.enqueue(msgs, total)
	}
	for i := range msgs {
		n := messageSize(&msgs[i])
		if err := p.reserve(ctx, n); err != nil {
			return err
		}
		if err := p.enqueue(msgs[i:i+1], n); err != nil {
			return err
		}
	}
	return nil
}

// reserve takes n bytes of the budget. When they are not free, the open
// batches are sealed first, so that the bytes they hold go on the wire
// and come back even when their linger time is far off.
func (p *Producer) reserve(ctx context.Context, n int) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return ErrProducerClosed
	}
	if p.budget.tryAcquire(n) {
		return nil
	}
	p.mu.Lock()
	for _, ps := range p.parts {
		p.sealLocked(ps)
	}
	p.mu.Unlock()
	if p.opts.failWhenFull {
		return ErrBufferFull
	}
	return p.budget.acquire(ctx, p.abort, n)
}

// pickPartition chooses m's partition. Caller must hold p.mu.
func (p *Producer) pickPartition(m *Message) uint32 {
	switch {
	case p.opts.fixed:
		return p.opts.partition
	case p.opts.partitioner != nil:
		mm := *m // the partitioner gets a copy, so msgs stay on the caller's stack
		return p.opts.partitioner(&mm, p.partitions) % p.partitions
	case len(m.Key) > 0:
		return xhash.XXH32(m.Key, 0) % p.partitions
	}
	return p.balanced
}

// Flush sends every buffered message now and waits until all messages
// accepted before the call are confirmed or failed. It returns the
// delivery errors recorded since the previous Flush (errors.Join of
// *DeliveryError, at most 16 kept), or the context error.
func (p *Producer) Flush(ctx context.Context) error {
	p.mu.Lock()
	for _, ps := range p.parts {
		p.sealLocked(ps)
	}
	var wait chan struct{}
	if p.outstanding > 0 {
		wait = make(chan struct{})
		p.idle = append(p.idle, wait)
	}
	p.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.takeErrors()
}

// takeErrors returns and clears the recorded delivery errors.
func (p *Producer) takeErrors() error {
	p.mu.Lock()
	errs, lost := p.errs, p.lost
	p.errs, p.lost = nil, 0
	p.mu.Unlock()
	if lost > 0 {
		errs = append(errs, errors.New("client: "+itoa(lost)+" more delivery errors"))
	}
	return errors.Join(errs...)
}

// Close stops accepting messages, flushes, and waits for the senders. If
// ctx ends first, batches not yet confirmed are abandoned (their outcome
// is unknown) and reported as failed with the context error. The client
// stays open.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	p.mu.Unlock()
	if already {
		p.wg.Wait()
		return nil
	}
	err := p.Flush(ctx)
	if err != nil && ctx.Err() != nil {
		close(p.abort)
	}
	p.wg.Wait()
	p.mu.Lock()
	for _, ps := range p.parts {
		ps.stopTimer()
	}
	p.mu.Unlock()
	if ctx.Err() != nil {
		return errors.Join(ctx.Err(), p.takeErrors())
	}
	return err
}

// itoa formats n in decimal.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
