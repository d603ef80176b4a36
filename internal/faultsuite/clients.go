//go:build !windows

package faultsuite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// Names of what the suite creates.
const (
	streamName = "faults"
	topicName  = "log"
	groupName  = "members"
)

// opTimeout bounds one client operation; an operation that runs out is
// recorded as info (outcome unknown).
const opTimeout = 10 * time.Second

// sendPause is a producer's pause between sends: it keeps the load to a
// few hundred sends per second per partition, so the nodes of a loaded
// 2-core machine still have time to fail over.
const sendPause = 4 * time.Millisecond

// maxOpsPerWorker bounds every worker loop in count (they are bounded in
// time by the run's context).
const maxOpsPerWorker = 2_000_000

// workload is the set of client workers of a run.
type workload struct {
	addrs      func() []string
	hist       *History
	partitions uint32
	stream     wire.Identifier
	topic      wire.Identifier
	group      wire.Identifier
	wg         sync.WaitGroup
	seed       uint64
	next       int
	mu         sync.Mutex
}

// newWorkload prepares workers against the topic of partitions
// partitions.
func newWorkload(addrs func() []string, hist *History, partitions uint32, seed uint64) *workload {
	return &workload{addrs: addrs, hist: hist, partitions: partitions, seed: seed,
		stream: wire.NamedID(streamName), topic: wire.NamedID(topicName), group: wire.NamedID(groupName)}
}

// clientNumber returns the next worker number.
func (w *workload) clientNumber() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	return w.next - 1
}

// dial connects a new SDK client to the cluster (seeds: every node),
// retrying until ctx ends.
func (w *workload) dial(ctx context.Context) (*client.Client, error) {
	for {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := client.Dial(dctx, strings.Join(w.addrs(), ","),
			client.WithCredentials(local.RootUsername, local.RootPassword),
			client.WithResponseTimeout(4*time.Second),
			client.WithDialTimeout(2*time.Second),
			client.WithTransientRetry(client.RetryPolicy{Budget: 6 * time.Second}))
		cancel()
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// classify maps a client error to the completion type: a refusal by the
// server with a code other than the transient 57/58 is a definite
// failure; anything else (timeouts, broken connections) is unknown.
func classify(err error) OpType {
	if err == nil {
		return TypeOK
	}
	var we *wire.Error
	if errors.As(err, &we) && we.ServerSent() && we.Code != wire.ErrTransientNotCommitted.Code && we.Code != wire.ErrTransientNotAccepted.Code {
		return TypeFail
	}
	return TypeInfo
}

// payloadID returns the id of worker client's seq-th message: unique in a
// run.
func payloadID(client int, seq uint64) uint64 { return uint64(client+1)<<40 | seq }

// payloadFor returns the exact payload the suite sends under id: 48 to
// 303 bytes derived from id, so a reader can check every byte.
func payloadFor(id uint64) []byte {
	r := rand.New(rand.NewPCG(id, id^0x9e3779b97f4a7c15))
	n := 48 + int(id%256)
	b := make([]byte, 0, n)
	b = fmt.Appendf(b, "fs-%016x-", id)
	for len(b) < n {
		b = append(b, byte('a'+r.IntN(26)))
	}
	return b
}

// records converts a poll reply to records, checking each payload.
func records(p *wire.PolledMessages) []Record {
	var out []Record
	it := p.Messages()
	for {
		m, ok := it.Next()
		if !ok {
			break
		}
		id := m.ID.Lo
		out = append(out, Record{Offset: m.Offset, ID: id, PayloadOK: m.ID.Hi == 0 && bytes.Equal(m.Payload, payloadFor(id))})
	}
	return out
}

// pause sleeps d or until ctx ends; it reports whether ctx is still live.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Producer starts a worker that sends one message at a time to partition,
// each with a fresh payload id.
func (w *workload) Producer(ctx context.Context, partition uint32) {
	w.run(ctx, func(c *client.Client, cl int) {
		for seq := uint64(1); seq < maxOpsPerWorker && ctx.Err() == nil; seq++ {
			id := payloadID(cl, seq)
			op := Op{Client: cl, Kind: KindSend, Partition: partition, PayloadID: id}
			w.hist.Begin(&op)
			octx, cancel := context.WithTimeout(ctx, opTimeout)
			conf, err := c.SendMessages(octx, w.stream, w.topic, wire.PartitioningByID(partition),
				[]wire.Message{{ID: wire.Uint128{Lo: id}, Payload: payloadFor(id)}})
			cancel()
			if err == nil && len(conf) > 0 {
				op.Offset, op.HasOffset = conf[0].BaseOffset, true
			}
			w.hist.Finish(op, classify(err), err)
			d := sendPause
			if err != nil {
				d = 100 * time.Millisecond
			}
			if !pause(ctx, d) {
				return
			}
		}
	})
}

// Reader starts a worker that polls partition sequentially by offset
// from 0, stores its position as single consumer "reader-<partition>"
// every few polls and reads it back.
func (w *workload) Reader(ctx context.Context, partition uint32) {
	w.run(ctx, func(c *client.Client, cl int) {
		name := fmt.Sprintf("reader-%d", partition)
		consumer := wire.SingleConsumer(wire.NamedID(name))
		var next uint64
		for n := 0; n < maxOpsPerWorker && ctx.Err() == nil; n++ {
			op := Op{Client: cl, Kind: KindPoll, Partition: partition, Offset: next, Consumer: name}
			w.hist.Begin(&op)
			octx, cancel := context.WithTimeout(ctx, opTimeout)
			p, err := c.PollMessages(octx, wire.PollMessages{Consumer: consumer, StreamID: w.stream, TopicID: w.topic,
				Partition: wire.SomePartition(partition), Strategy: wire.OffsetStrategy(next), Count: 100})
			cancel()
			if err == nil {
				op.Records = records(p)
			}
			w.hist.Finish(op, classify(err), err)
			if err != nil || len(op.Records) == 0 {
				if !pause(ctx, 100*time.Millisecond) {
					return
				}
				continue
			}
			next = op.Records[len(op.Records)-1].Offset + 1
			if n%3 == 0 {
				w.storeAndGet(ctx, c, cl, partition, consumer, name, next-1)
			}
		}
	})
}

// storeAndGet stores value as the consumer's offset and reads it back.
func (w *workload) storeAndGet(ctx context.Context, c *client.Client, cl int, partition uint32, consumer wire.Consumer, name string, value uint64) {
	op := Op{Client: cl, Kind: KindStore, Partition: partition, Offset: value, Consumer: name}
	w.hist.Begin(&op)
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	err := c.StoreConsumerOffset(octx, consumer, w.stream, w.topic, wire.SomePartition(partition), value)
	cancel()
	w.hist.Finish(op, classify(err), err)

	g := Op{Client: cl, Kind: KindGet, Partition: partition, Consumer: name}
	w.hist.Begin(&g)
	octx, cancel = context.WithTimeout(ctx, opTimeout)
	off, err := c.GetConsumerOffset(octx, consumer, w.stream, w.topic, wire.SomePartition(partition))
	cancel()
	if err == nil && off != nil {
		g.Offset, g.HasOffset = off.StoredOffset, true
	}
	w.hist.Finish(g, classify(err), err)
}

// Member starts a consumer-group member: it joins the group, syncs its
// assignment (each answer recorded as an observation), polls its
// partitions with auto commit, and now and then leaves and joins again.
func (w *workload) Member(ctx context.Context) {
	w.run(ctx, func(c *client.Client, cl int) {
		rng := rand.New(rand.NewPCG(w.seed, uint64(cl)))
		consumer := wire.GroupConsumer(w.group)
		joined := false
		for n := 0; n < maxOpsPerWorker && ctx.Err() == nil; n++ {
			if !joined {
				op := Op{Client: cl, Kind: KindJoin}
				w.hist.Begin(&op)
				octx, cancel := context.WithTimeout(ctx, opTimeout)
				err := c.JoinConsumerGroup(octx, w.stream, w.topic, w.group)
				cancel()
				w.hist.Finish(op, classify(err), err)
				if err != nil {
					pause(ctx, 200*time.Millisecond)
					continue
				}
				joined = true
			}
			op := Op{Client: cl, Kind: KindSync}
			w.hist.Begin(&op)
			octx, cancel := context.WithTimeout(ctx, opTimeout)
			a, err := c.SyncConsumerGroup(octx, w.stream, w.topic, w.group)
			cancel()
			if err == nil {
				op.Generation, op.Partitions = a.Generation, append([]uint32(nil), a.Partitions...)
			}
			w.hist.Finish(op, classify(err), err)
			if errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
				joined = false // the membership ended (a disconnect, a failover)
				continue
			}
			if err != nil {
				pause(ctx, 200*time.Millisecond)
				continue
			}
			for _, p := range a.Partitions {
				gp := Op{Client: cl, Kind: KindGroupPoll, Partition: p, Generation: a.Generation}
				w.hist.Begin(&gp)
				octx, cancel := context.WithTimeout(ctx, opTimeout)
				r, err := c.PollMessages(octx, wire.PollMessages{Consumer: consumer, StreamID: w.stream, TopicID: w.topic,
					Partition: wire.SomePartition(p), Strategy: wire.NextStrategy(), Count: 50, AutoCommit: true})
				cancel()
				if err == nil {
					gp.Records = records(r)
				}
				w.hist.Finish(gp, classify(err), err)
			}
			if rng.IntN(40) == 0 {
				op := Op{Client: cl, Kind: KindLeave}
				w.hist.Begin(&op)
				octx, cancel := context.WithTimeout(ctx, opTimeout)
				err := c.LeaveConsumerGroup(octx, w.stream, w.topic, w.group)
				cancel()
				w.hist.Finish(op, classify(err), err)
				joined = false
			}
			if !pause(ctx, 150*time.Millisecond) {
				return
			}
		}
	})
}

// Wait waits for every worker to end (after the run's context ended).
func (w *workload) Wait() { w.wg.Wait() }

// run starts a worker: body runs on a goroutine of its own (Wait joins
// it) with a client of its own, numbered cl in the history; a worker
// that cannot dial records nothing.
func (w *workload) run(ctx context.Context, body func(c *client.Client, cl int)) {
	cl := w.clientNumber()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		c, err := w.dial(ctx)
		if err != nil {
			return
		}
		defer c.Close()
		body(c, cl)
	}()
}
