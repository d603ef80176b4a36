//go:build !windows

package clustertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// Workload drives producers (one message per SEND_MESSAGES, each with a
// unique id) and readers (the whole partition, from the node believed to
// lead) against a topic of the harness's cluster, recording every
// operation in History.
type Workload struct {
	h          *Harness
	History    *History
	Stream     wire.Identifier
	Topic      wire.Identifier
	Partitions uint32
	stop       chan struct{}
	stopOnce   sync.Once
	wg         sync.WaitGroup
	clients    atomic.Int32
}

// NewWorkload creates stream "s" and topic "t" with partitions partitions
// on the leader and waits until every running node serves a poll of it.
func NewWorkload(t testing.TB, h *Harness, partitions uint32) *Workload {
	t.Helper()
	w := &Workload{h: h, History: NewHistory(), Stream: wire.NamedID("s"), Topic: wire.NamedID("t"), Partitions: partitions, stop: make(chan struct{})}
	c, leader := h.DialLeader()
	defer c.Close()
	if _, err := c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}); err != nil {
		t.Fatalf("create stream on leader node %d: %v", leader, err)
	}
	if _, err := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: w.Stream, PartitionsCount: partitions, Name: "t"}); err != nil {
		t.Fatalf("create topic on leader node %d: %v", leader, err)
	}
	for i := range h.N() {
		w.waitServes(t, i, 20*time.Second)
	}
	t.Cleanup(w.Stop)
	return w
}

// waitServes waits until node i answers a poll of every partition.
func (w *Workload) waitServes(t testing.TB, i int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		_, last = w.readAll(i)
		if last == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("node %d does not serve the topic after %s: %v", i, timeout, last)
}

// newClient returns the next client number.
func (w *Workload) newClient() int { return int(w.clients.Add(1)) - 1 }

func (w *Workload) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// Stop ends every producer and reader and waits for them.
func (w *Workload) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.wg.Wait()
}

// msgID is the id of client's seq-th message: unique over the test.
func msgID(client int, seq uint64) uint64 { return uint64(client+1)<<32 | seq }

// Producer starts a client appending to partition, one message at a time,
// pausing pause between requests.
func (w *Workload) Producer(partition uint32, pause time.Duration) {
	w.produce(partition, pause, false)
}

// retryBudget bounds the retries of one request of a RetryingProducer,
// as the SDKs' request budget does.
const retryBudget = 30 * time.Second

// RetryingProducer starts a client appending to partition like Producer,
// except that a request without a usable answer (no reply, 57) is retried
// as the contract allows for exactly-once delivery: the client keeps its
// id across reconnects, logs in again (on the leader) and re-sends the
// identical batch under the original request number until it is
// acknowledged, answered as a duplicate (success without a confirmation:
// it had been applied), or refused, within retryBudget.
func (w *Workload) RetryingProducer(partition uint32, pause time.Duration) {
	w.produce(partition, pause, true)
}

// produce is Producer, or RetryingProducer when retry is set.
func (w *Workload) produce(partition uint32, pause time.Duration, retry bool) {
	client := w.newClient()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		s := newSession(w.h, client%w.h.N())
		if retry {
			s.id = local.NewClientID()
		}
		defer s.drop()
		var seq uint64
		for !w.stopped() {
			c, err := s.ensure()
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			seq++
			id := msgID(client, seq)
			batch, err := oneMessage(id)
			if err != nil {
				panic(err) // a fixed-size message always builds
			}
			op := Op{Client: client, Kind: Append, Partition: partition, MsgID: id, Node: s.node, Call: w.History.Now()}
			req := c.NextRequest()
			off, err := c.Send(w.Stream, w.Topic, partition, batch)
			op.Outcome, op.Code = s.classify(err)
			until := time.Now().Add(retryBudget)
			for retry && op.Outcome == Unknown && time.Now().Before(until) {
				op.Retries++
				time.Sleep(50 * time.Millisecond)
				if c, err = s.ensure(); err != nil {
					continue
				}
				c.SetNextRequest(req)
				off, err = c.Send(w.Stream, w.Topic, partition, batch)
				o, code := s.classify(err)
				if o == Failed && code == 58 {
					// Not admitted by this node; the original may still
					// have committed elsewhere: the outcome stays unknown.
					continue
				}
				op.Outcome, op.Code = o, code
			}
			op.Dup = retry && errors.Is(err, local.ErrDuplicate)
			op.Return = w.History.Now()
			op.Offset, op.Err = off, err
			w.History.Add(op)
			if op.Outcome != OK {
				time.Sleep(50 * time.Millisecond)
			} else if pause > 0 {
				time.Sleep(pause)
			}
		}
	}()
}

// oneMessage builds a batch of one 64-byte message with id.
func oneMessage(id uint64) ([]byte, error) {
	var b wire.BatchBuilder
	b.Reset(nil)
	payload := []byte(fmt.Sprintf("%016x-%047d", id, id))
	if err := b.Add(wire.Uint128{Lo: id}, uint64(time.Now().UnixMicro()), payload, nil); err != nil {
		return nil, err
	}
	return b.Finish()
}

// Reader starts a client reading the whole of partition every interval
// from the node that reports itself as leader (asked on the same
// connection right before each read).
func (w *Workload) Reader(partition uint32, interval time.Duration) {
	client := w.newClient()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		s := newSession(w.h, client%w.h.N())
		defer s.drop()
		for !w.stopped() {
			c, err := s.ensure()
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			// Re-check before every read that the node still reports itself
			// as the leader: reads never get 58, so without this a reader
			// that connected to a leader would follow it into followership.
			m, err := c.ClusterMetadata()
			if err != nil || local.LeaderIndex(m) != s.node {
				s.drop()
				time.Sleep(50 * time.Millisecond)
				continue
			}
			op := Op{Client: client, Kind: Read, Partition: partition, Node: s.node, Call: w.History.Now()}
			log, err := readPartition(c, w.Stream, w.Topic, partition)
			op.Return = w.History.Now()
			op.Log, op.Err = log, err
			op.Outcome, op.Code = s.classify(err)
			w.History.Add(op)
			time.Sleep(interval)
		}
	}()
}

// LocalReader starts a client reading the whole of partition every
// interval from each node in turn (no leader following), followers
// included.
func (w *Workload) LocalReader(partition uint32, interval time.Duration) {
	client := w.newClient()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for node := 0; !w.stopped(); node = (node + 1) % w.h.N() {
			op := Op{Client: client, Kind: LocalRead, Partition: partition, Node: node, Call: w.History.Now()}
			op.Log, op.Err = w.readOne(node, partition)
			op.Return = w.History.Now()
			op.Outcome = OK
			if op.Err != nil {
				op.Outcome, op.Code = Failed, local.ErrorCode(op.Err)
			}
			w.History.Add(op)
			time.Sleep(interval)
		}
	}()
}

// readOne reads partition from node i over a new connection.
func (w *Workload) readOne(i int, partition uint32) ([]uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c, err := local.DialLogin(ctx, w.h.Addr(i))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = requestTimeout
	return readPartition(c, w.Stream, w.Topic, partition)
}

// pollChunk is the count of one poll while reading a whole partition.
const pollChunk = 1000

// readPartition polls partition from offset 0 to its end and returns the
// message ids by offset; a gap or a reordering of offsets is an error.
// The log only grows and its entries never change, so the concatenation
// of the polls is the log as it was at the last poll.
func readPartition(c *local.Conn, stream, topic wire.Identifier, partition uint32) ([]uint64, error) {
	var ids []uint64
	for {
		pm, err := c.Poll(stream, topic, partition, uint64(len(ids)), pollChunk)
		if err != nil {
			return nil, err
		}
		n := 0
		it := pm.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if m.Offset != uint64(len(ids)) {
				return nil, fmt.Errorf("%w: partition %d: message %#x at offset %d, want offset %d", errOffsets, partition, local.MessageID(m), m.Offset, len(ids))
			}
			ids = append(ids, local.MessageID(m))
			n++
		}
		if n == 0 {
			return ids, nil
		}
	}
}

// readAll reads every partition from node i (no leader following).
func (w *Workload) readAll(i int) ([][]uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c, err := local.DialLogin(ctx, w.h.Addr(i))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = requestTimeout
	out := make([][]uint64, w.Partitions)
	for p := range w.Partitions {
		if out[p], err = readPartition(c, w.Stream, w.Topic, p); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
	}
	return out, nil
}

// logStored logs how many messages each running node stores per
// partition (a view of replication progress for the test output).
func (w *Workload) logStored(t testing.TB, when string) {
	t.Helper()
	var parts []string
	for i := range w.h.N() {
		if slices.Contains(w.h.Down(), i) {
			continue
		}
		logs, err := w.readAll(i)
		if err != nil {
			parts = append(parts, fmt.Sprintf("node %d: %v", i, err))
			continue
		}
		n := make([]int, len(logs))
		for p, l := range logs {
			n[p] = len(l)
		}
		parts = append(parts, fmt.Sprintf("node %d %v", i, n))
	}
	t.Logf("%s: messages stored per partition: %s", when, strings.Join(parts, "; "))
}
