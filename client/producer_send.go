package client

import (
	"context"
	"errors"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// partState is one partition's batching and sending state; every field
// is guarded by Producer.mu except wake.
type partState struct {
	id      uint32
	cur     *batch   // open batch, nil when none
	ready   []*batch // sealed, waiting for the sender
	running bool     // a sender goroutine is alive
	gen     uint64   // increments at every seal; the linger timer checks it
	timer   *time.Timer
	wake    chan struct{} // capacity 1: tells the sender new batches are ready
}

func (ps *partState) stopTimer() {
	if ps.timer != nil {
		ps.timer.Stop()
		ps.timer = nil
	}
}

// batch is one SendMessages request of the producer.
type batch struct {
	sf     *sendFrame
	cl     *call
	msgs   int
	bytes  int     // budget bytes held
	replay *replay // transient retries, from the first rejection
	err    error
	report DeliveryReport
}

// part returns the state of partition id. Caller must hold p.mu.
func (p *Producer) part(id uint32) *partState {
	ps := p.parts[id]
	if ps == nil {
		ps = &partState{id: id, wake: make(chan struct{}, 1)}
		p.parts[id] = ps
	}
	return ps
}

// maxSendOverhead bounds the bytes of a SendMessages frame beyond its
// messages: request header, metadata with two 255-byte names, batch header.
const maxSendOverhead = wire.HeaderSize + 4 + 2*257 + 6 + 4 + wire.BatchHeaderSize

// initialBatchCap is the first capacity of a batch buffer; it grows by
// doubling up to the batch byte limit.
const initialBatchCap = 64 << 10

// enqueue copies msgs (whose encoded size, total, is already reserved
// from the budget) into their partitions' open batches.
func (p *Producer) enqueue(msgs []Message, total int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.budget.release(total)
		return ErrProducerClosed
	}
	now := nowMicros()
	for i := range msgs {
		m := &msgs[i]
		n := messageSize(m)
		ps := p.part(p.pickPartition(m))
		if b := ps.cur; b != nil && (b.msgs >= p.opts.batchMessages || b.bytes+n > p.opts.batchBytes) {
			p.sealLocked(ps)
		}
		ts := now
		if !m.Timestamp.IsZero() {
			ts = uint64(m.Timestamp.UnixMicro())
		}
		var hdrs []byte
		if len(m.Headers) > 0 {
			p.headerBuf = m.Headers.AppendTo(p.headerBuf[:0])
			hdrs = p.headerBuf
		}
		err := p.addLocked(ps, m.ID, ts, m.Payload, hdrs)
		if errors.Is(err, wire.ErrInvalidMessageTimestampDelta) && ps.cur.msgs > 0 {
			// The batch spans at most u32 µs of producer clock: start another.
			p.sealLocked(ps)
			err = p.addLocked(ps, m.ID, ts, m.Payload, hdrs)
		}
		if err != nil {
			rest := 0
			for j := i; j < len(msgs); j++ {
				rest += messageSize(&msgs[j])
			}
			p.budget.release(rest)
			return err
		}
		b := ps.cur
		b.msgs++
		b.bytes += n
		p.outstanding++
		switch {
		case b.msgs >= p.opts.batchMessages || b.bytes >= p.opts.batchBytes:
			p.sealLocked(ps)
		case p.opts.linger == 0 && !ps.running:
			p.sealLocked(ps)
		case p.opts.linger == 0:
			// The sender seals the open batch when it has a free slot.
			select {
			case ps.wake <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

// addLocked appends one message to ps's open batch, opening one (and its
// linger timer) when needed. Caller must hold p.mu.
func (p *Producer) addLocked(ps *partState, id wire.Uint128, ts uint64, payload, hdrs []byte) error {
	if ps.cur == nil {
		var buf []byte
		if v, ok := p.frames.Get().(*[]byte); ok {
			buf = *v
		}
		sf, err := startSend(buf, p.stream, p.topic, wire.PartitioningByID(ps.id), min(p.opts.batchBytes, initialBatchCap))
		if err != nil {
			return err
		}
		ps.cur = &batch{sf: sf}
		if p.opts.linger > 0 {
			gen := ps.gen
			ps.timer = time.AfterFunc(p.opts.linger, func() {
				p.mu.Lock()
				if !p.closed && ps.gen == gen {
					p.sealLocked(ps)
				}
				p.mu.Unlock()
			})
		}
	}
	return ps.cur.sf.add(id, ts, payload, hdrs)
}

// sealLocked closes ps's open batch and hands it to the partition's
// sender, starting one when none runs. Sealing the batch of the balanced
// partition moves the balanced choice to the next partition. Caller must
// hold p.mu.
func (p *Producer) sealLocked(ps *partState) {
	b := ps.cur
	if b == nil || b.msgs == 0 {
		return
	}
	ps.cur = nil
	ps.gen++
	ps.stopTimer()
	ps.ready = append(ps.ready, b)
	if !p.opts.fixed && p.opts.partitioner == nil && ps.id == p.balanced && p.partitions > 0 {
		p.rr++
		p.balanced = p.rr % p.partitions
	}
	if !ps.running {
		ps.running = true
		p.wg.Add(1)
		go p.runSender(ps)
		return
	}
	select {
	case ps.wake <- struct{}{}:
	default:
	}
}

// runSender sends ps's sealed batches in order, keeping up to
// MaxInFlight on the wire, and completes them in order. It exits when
// nothing is left to send or await.
func (p *Producer) runSender(ps *partState) {
	defer p.wg.Done()
	var window []*batch
	for {
		p.mu.Lock()
		var next []*batch
		for len(window)+len(next) < p.opts.maxInFlight {
			if len(ps.ready) == 0 && p.opts.linger == 0 {
				p.sealLocked(ps) // a free slot sends the open batch at once
			}
			if len(ps.ready) == 0 {
				break
			}
			next = append(next, ps.ready[0])
			ps.ready[0] = nil
			ps.ready = ps.ready[1:]
		}
		if len(window)+len(next) == 0 {
			ps.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		for _, b := range next {
			p.start(b)
			window = append(window, b)
		}
		oldest := window[0]
		if oldest.err != nil {
			p.complete(ps, oldest)
			window = window[1:]
			continue
		}
		var wake chan struct{}
		if len(window) < p.opts.maxInFlight {
			wake = ps.wake
		}
		select {
		case <-oldest.cl.done:
			if p.settle(oldest) {
				p.complete(ps, oldest)
				window = window[1:]
			}
		case <-wake:
		case <-p.abort:
			p.abandon(ps, window)
			return
		}
	}
}

// start finishes b's frame and submits it.
func (p *Producer) start(b *batch) {
	cl, err := b.sf.finish(p.c.id)
	b.sf = nil
	if err != nil {
		b.err = err
		return
	}
	b.cl = cl
	if err := p.c.submit(cl); err != nil {
		b.err = err
	}
}

// settle interprets b's reply. A transient rejection is resent with the
// same frame after a backoff (settle then reports false); otherwise b's
// report is filled and settle reports true.
func (p *Producer) settle(b *batch) bool {
	cl := b.cl
	if cl.err != nil {
		b.err = cl.err
		return true
	}
	payload, err := cl.result()
	if err != nil && isTransient(err) {
		if b.replay == nil {
			b.replay = p.c.newReplay(false)
		}
		pause, recheck, ok := b.replay.next(err)
		if !ok {
			b.err = err
			return true
		}
		if errors.Is(err, wire.ErrTransientNotAccepted) {
			p.c.router.notLeader(cl)
		}
		if recheck {
			p.recheckLeader()
		}
		select {
		case <-time.After(pause):
		case <-p.abort:
			b.err = err
			return true
		}
		cl.rearm()
		if err := p.c.submit(cl); err != nil {
			b.err = err
			return true
		}
		return false
	}
	if err != nil {
		b.err = err
		return true
	}
	var r wire.SendMessagesReply
	if err := r.Decode(payload); err != nil {
		b.err = &ProtocolError{Reason: "undecodable SEND_MESSAGES reply: " + err.Error()}
		return true
	}
	if len(r.Confirmations) > 0 {
		b.report.BaseOffset, b.report.HasOffset = r.Confirmations[0].BaseOffset, true
	}
	return true
}

// complete releases b's budget, reports it and wakes Flush waiters.
func (p *Producer) complete(ps *partState, b *batch) {
	b.report.Partition, b.report.Messages = ps.id, b.msgs
	if b.err != nil {
		b.report.Err = wrapCmd(wire.CmdSendMessages, b.err)
	}
	if b.cl != nil && !b.cl.abandoned.Load() && cap(b.cl.frame) <= 2*(p.opts.batchBytes+maxSendOverhead) {
		// Nothing references a completed frame any more: keep its
		// buffer for the next batch.
		f := b.cl.frame[:0]
		p.frames.Put(&f)
	}
	b.cl, b.sf = nil, nil
	p.budget.release(b.bytes)
	p.mu.Lock()
	if b.report.Err != nil {
		if len(p.errs) < maxRecordedErrors {
			p.errs = append(p.errs, &DeliveryError{Partition: ps.id, Messages: b.msgs, Err: b.report.Err})
		} else {
			p.lost++
		}
		if errors.Is(b.err, wire.ErrPartitionNotFound) || errors.Is(b.err, wire.ErrResourceNotFound) {
			p.refreshLocked()
		}
	}
	p.outstanding -= b.msgs
	if p.outstanding == 0 {
		for _, w := range p.idle {
			close(w)
		}
		p.idle = nil
	}
	p.mu.Unlock()
	if p.opts.onDelivery != nil {
		p.opts.onDelivery(b.report)
	}
}

// abandon fails every batch of ps still held, after Close gave up.
func (p *Producer) abandon(ps *partState, window []*batch) {
	for _, b := range window {
		if b.cl != nil {
			b.cl.abandoned.Store(true)
		}
	}
	p.mu.Lock()
	rest := ps.ready
	ps.ready = nil
	if ps.cur != nil && ps.cur.msgs > 0 {
		rest = append(rest, ps.cur)
	}
	ps.cur = nil
	ps.running = false
	p.mu.Unlock()
	for _, b := range append(window, rest...) {
		if b.err == nil {
			b.err = errAbandoned
		}
		p.complete(ps, b)
	}
}

// errAbandoned fails batches Close stopped waiting for.
var errAbandoned = errors.New("client: producer closed before the batch was confirmed")

// refreshLocked re-reads the topic's partition count in the background
// after a send hit a missing partition. Caller must hold p.mu.
func (p *Producer) refreshLocked() {
	if p.opts.fixed || p.refreshing || p.closed {
		return
	}
	p.refreshing = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		t, err := p.c.GetTopic(ctx, p.stream, p.topic)
		p.mu.Lock()
		if err == nil && t.PartitionsCount > 0 {
			p.partitions = t.PartitionsCount
			p.balanced %= p.partitions
		}
		p.refreshing = false
		p.mu.Unlock()
	}()
}

// recheckLeader runs the client's failover check for a batch that kept
// getting 58; Close giving up ends it.
func (p *Producer) recheckLeader() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.abort:
			cancel()
		case <-ctx.Done():
		}
	}()
	p.c.recheckLeader(ctx)
}
