package replication

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// Calls between hosts: a request and its reply travel as envelopes of
// their own kinds (transport.KindCall, transport.KindReply) over the
// replica transport, next to the raft messages, tagged with a
// correlation id. Neither side touches the host's loop: the caller sends
// from its own goroutine and waits for the reply; the transport's reader
// hands a request to a goroutine of its own (bounded per peer), which runs
// the handler registered for its kind and sends the reply.
//
// Request body: u8 kind | uvarint timeout in milliseconds (0: none) |
// payload. Reply body: u8 status | payload (status callOK) or the error
// text.

// CallHandler serves the calls of one kind on the receiving host: from is
// the calling replica, payload the request. Its context ends at the
// caller's deadline or when the host closes. A returned error travels
// back as a *RemoteError; an error that wraps ErrCallRefused tells the
// caller that nothing was done (CallNotRun). The returned payload is sent
// from where it lies: the handler must not modify it afterwards.
type CallHandler func(ctx context.Context, from NodeID, payload []byte) ([]byte, error)

// Errors of Call. ErrCallUnreachable, ErrCallRefused and ErrCallTooLarge
// prove the handler never ran on the peer (CallNotRun); after
// ErrCallLost, a context error or ErrStopped it may have.
var (
	ErrCallUnreachable = errors.New("call not sent: no connection to the replica")
	ErrCallRefused     = errors.New("call refused by the replica before it ran")
	ErrCallTooLarge    = errors.New("call larger than the replica frame limit")
	ErrCallLost        = errors.New("connection to the replica ended before the reply")
)

// RemoteError is an error a call's handler returned on the peer.
type RemoteError struct {
	Peer NodeID
	Kind uint8
	Msg  string
}

// Error names the peer, the call kind and the handler's message.
func (e *RemoteError) Error() string {
	return fmt.Sprintf("call kind %d on replica %d: %s", e.Kind, e.Peer, e.Msg)
}

// CallNotRun reports whether err, returned by Call, proves that the
// peer's handler never ran the request, so it may be sent again (to the
// same or another replica) without running twice.
func CallNotRun(err error) bool {
	return errors.Is(err, ErrCallUnreachable) || errors.Is(err, ErrCallRefused) || errors.Is(err, ErrCallTooLarge)
}

// Reply statuses.
const (
	callOK      byte = 0
	callFailed  byte = 1 // the handler returned an error
	callRefused byte = 2 // refused before the handler ran
)

// Defaults of the call Config fields.
const (
	// DefaultMaxCallBytes bounds a call's request and reply: the replica
	// transport's default frame limit less room for the envelope.
	DefaultMaxCallBytes = transport.DefaultMaxFrameBytes - callOverhead
	// DefaultCallHandlersPerPeer bounds the handlers running at once for
	// one calling replica.
	DefaultCallHandlersPerPeer = 64
	// DefaultCallBacklogPerPeer bounds the requests of one replica that
	// wait for a handler slot; beyond it requests are refused.
	DefaultCallBacklogPerPeer = 1024
	// callOverhead is the room a frame needs around a call's payload:
	// frame and batch headers, the envelope and the call's own header.
	callOverhead = 64
)

// calls is a host's side of calls: the requests it waits for and the
// handlers it runs.
type calls struct {
	h    *Host
	next atomic.Uint64 // correlation ids

	mu       sync.Mutex
	pending  map[uint64]*pendingCall // guarded by mu
	handlers map[uint8]CallHandler   // guarded by mu
	peers    map[NodeID]*callPeer    // guarded by mu
	closed   bool                    // guarded by mu

	// ctx ends when the host closes; handlers run under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// pendingCall is a request waiting for its reply.
type pendingCall struct {
	to   NodeID
	kind uint8
	done chan callResult // cap 1
}

type callResult struct {
	payload []byte
	err     error
}

// callPeer bounds the handlers one replica's requests run.
type callPeer struct {
	admitted atomic.Int64  // running and waiting
	slots    chan struct{} // running
}

func newCalls(h *Host) *calls {
	ctx, cancel := context.WithCancel(context.Background())
	return &calls{
		h: h, pending: map[uint64]*pendingCall{}, handlers: map[uint8]CallHandler{}, peers: map[NodeID]*callPeer{},
		ctx: ctx, cancel: cancel,
	}
}

// HandleCall registers h for calls of kind (nil removes it). It may be
// called at any time; requests of a kind without a handler are refused
// (ErrCallRefused at the caller).
func (h *Host) HandleCall(kind uint8, handler CallHandler) {
	c := h.calls
	c.mu.Lock()
	defer c.mu.Unlock()
	if handler == nil {
		delete(c.handlers, kind)
		return
	}
	c.handlers[kind] = handler
}

// Call sends a request of kind to replica to and returns the payload its
// handler answered. It fails at once with ErrCallUnreachable when there
// is no connection to the replica (or it is unknown), with
// ErrCallTooLarge when the request exceeds the frame limit, with
// ErrCallRefused when the replica refused it (no handler for kind, too
// many calls of this host waiting there, closing), with ErrCallLost when
// the connection ends (or the replica is declared dead) before the
// reply, with a *RemoteError when the handler failed, and with ctx's
// error when ctx ends first. The handler's context carries ctx's
// deadline. A call to this host itself runs the handler on the caller's
// goroutine. The request is sent from payload itself, which the caller
// must not modify afterwards (when Call returns early, the request may
// still be on its way).
func (h *Host) Call(ctx context.Context, to NodeID, kind uint8, payload []byte) ([]byte, error) {
	if to == h.cfg.Self {
		return h.calls.local(ctx, kind, payload)
	}
	var timeout uint64
	if d, ok := ctx.Deadline(); ok {
		timeout = uint64(max(time.Until(d).Milliseconds(), 1))
	}
	head := make([]byte, 0, 1+binary.MaxVarintLen64)
	head = append(head, kind)
	head = binary.AppendUvarint(head, timeout)
	if n := len(head) + len(payload); n > h.cfg.MaxCallBytes {
		return nil, fmt.Errorf("call kind %d to replica %d: %w (%d bytes, limit %d)", kind, to, ErrCallTooLarge, n, h.cfg.MaxCallBytes)
	}
	c := h.calls
	id := c.next.Add(1)
	pc := &pendingCall{to: to, kind: kind, done: make(chan callResult, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("call kind %d to replica %d: %w", kind, to, ErrStopped)
	}
	c.pending[id] = pc
	c.mu.Unlock()
	h.stats.callsSent.Add(1)
	// A drop for want of a connection reports the envelope unreachable
	// before Send returns, which completes pc at once.
	h.cfg.Network.Send(to, []transport.Envelope{{Group: id, Kind: transport.KindCall, Prefix: head, Data: payload}})
	select {
	case r := <-pc.done:
		if r.err != nil {
			h.stats.callsFailed.Add(1)
		}
		return r.payload, r.err
	case <-ctx.Done():
		c.forget(id)
		h.stats.callsFailed.Add(1)
		return nil, fmt.Errorf("call kind %d to replica %d: %w", kind, to, ctx.Err())
	case <-c.ctx.Done():
		c.forget(id)
		h.stats.callsFailed.Add(1)
		return nil, fmt.Errorf("call kind %d to replica %d: %w", kind, to, ErrStopped)
	}
}

// forget drops the pending call id (its reply, if it comes, is ignored).
func (c *calls) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// complete resolves pending call id with r if it still waits and, when
// from is set, was sent to *from.
func (c *calls) complete(id uint64, from *NodeID, r callResult) {
	c.mu.Lock()
	pc := c.pending[id]
	if pc == nil || (from != nil && pc.to != *from) {
		c.mu.Unlock()
		return
	}
	delete(c.pending, id)
	c.mu.Unlock()
	pc.done <- r
}

// failPeer fails every call waiting for a reply from peer with err.
func (c *calls) failPeer(peer NodeID, err error) {
	c.mu.Lock()
	var failed []*pendingCall
	for id, pc := range c.pending {
		if pc.to == peer {
			failed = append(failed, pc)
			delete(c.pending, id)
		}
	}
	c.mu.Unlock()
	for _, pc := range failed {
		pc.done <- callResult{err: fmt.Errorf("call kind %d to replica %d: %w", pc.kind, peer, err)}
	}
}

// handler returns the handler of kind.
func (c *calls) handler(kind uint8) CallHandler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handlers[kind]
}

// local runs a call to this host itself.
func (c *calls) local(ctx context.Context, kind uint8, payload []byte) ([]byte, error) {
	hd := c.handler(kind)
	if hd == nil {
		return nil, fmt.Errorf("call kind %d to this replica: %w: no handler", kind, ErrCallRefused)
	}
	out, err := hd(ctx, c.h.cfg.Self, payload)
	if err != nil {
		if errors.Is(err, ErrCallRefused) {
			return nil, fmt.Errorf("call kind %d to this replica: %w", kind, err)
		}
		return nil, &RemoteError{Peer: c.h.cfg.Self, Kind: kind, Msg: err.Error()}
	}
	return out, nil
}

// reply handles a KindReply envelope from peer from. It runs on a
// transport reader and does not block.
func (c *calls) reply(from NodeID, e transport.Envelope) {
	if len(e.Data) == 0 {
		return
	}
	c.mu.Lock()
	pc := c.pending[e.Group]
	c.mu.Unlock()
	if pc == nil || pc.to != from {
		return // given up, or failed with the connection
	}
	var r callResult
	switch status, rest := e.Data[0], e.Data[1:]; status {
	case callOK:
		r.payload = rest
	case callRefused:
		r.err = fmt.Errorf("call kind %d to replica %d: %w: %s", pc.kind, from, ErrCallRefused, rest)
	default:
		r.err = &RemoteError{Peer: from, Kind: pc.kind, Msg: string(rest)}
	}
	c.complete(e.Group, &from, r)
}

// serve handles a KindCall envelope from peer from: it refuses it at
// once, or hands it to a goroutine that waits for one of the peer's
// handler slots. It runs on a transport reader and does not block.
func (c *calls) serve(from NodeID, e transport.Envelope) {
	id := e.Group
	kind, timeout, payload, err := decodeCall(e.Data)
	if err != nil {
		c.refuse(from, id, err.Error())
		return
	}
	hd := c.handler(kind)
	if hd == nil {
		c.refuse(from, id, fmt.Sprintf("no handler for call kind %d", kind))
		return
	}
	cfg := &c.h.cfg
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.refuse(from, id, "replica stopping")
		return
	}
	p := c.peers[from]
	if p == nil {
		p = &callPeer{slots: make(chan struct{}, cfg.CallHandlersPerPeer)}
		c.peers[from] = p
	}
	if p.admitted.Add(1) > int64(cfg.CallHandlersPerPeer+cfg.CallBacklogPerPeer) {
		p.admitted.Add(-1)
		c.mu.Unlock()
		c.h.stats.callsRefused.Add(1)
		c.refuse(from, id, "too many calls waiting")
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer p.admitted.Add(-1)
		select {
		case p.slots <- struct{}{}:
		case <-c.ctx.Done():
			c.refuse(from, id, "replica stopping")
			return
		}
		out, err := c.run(hd, from, kind, timeout, payload)
		<-p.slots
		c.h.stats.callsServed.Add(1)
		switch {
		case errors.Is(err, ErrCallRefused):
			c.refuse(from, id, err.Error())
		case err != nil:
			c.send(from, id, callFailed, []byte(err.Error()))
		case 1+len(out) > cfg.MaxCallBytes:
			c.send(from, id, callFailed, fmt.Appendf(nil, "reply of %d bytes exceeds the frame limit", len(out)))
		default:
			c.send(from, id, callOK, out)
		}
	}()
}

// run runs one handler under the host's context and the caller's
// deadline; a panic becomes an error (one bad request must not stop the
// replica).
func (c *calls) run(hd CallHandler, from NodeID, kind uint8, timeout uint64, payload []byte) (out []byte, err error) {
	ctx := c.ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout)*time.Millisecond)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			c.h.log.Error("call handler panicked", "kind", kind, "from", uint64(from), "panic", r)
			out, err = nil, fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return hd(ctx, from, payload)
}

// refuse answers call id of peer to with a refusal.
func (c *calls) refuse(to NodeID, id uint64, why string) {
	c.send(to, id, callRefused, []byte(why))
}

// send sends the reply of call id to peer to.
func (c *calls) send(to NodeID, id uint64, status byte, payload []byte) {
	c.h.cfg.Network.Send(to, []transport.Envelope{{Group: id, Kind: transport.KindReply, Prefix: []byte{status}, Data: payload}})
}

// close fails every waiting call, refuses new ones, ends the handlers'
// context and waits for the handlers to return.
func (c *calls) close() {
	c.mu.Lock()
	c.closed = true
	pending := c.pending
	c.pending = map[uint64]*pendingCall{}
	c.mu.Unlock()
	c.cancel()
	for _, pc := range pending {
		pc.done <- callResult{err: fmt.Errorf("call kind %d to replica %d: %w", pc.kind, pc.to, ErrStopped)}
	}
	c.wg.Wait()
}

// errUnreachable is the error of call envelope e that could not be sent
// to peer to.
func errUnreachable(e transport.Envelope, to NodeID) error {
	var kind uint8
	if len(e.Prefix) > 0 {
		kind = e.Prefix[0]
	}
	return fmt.Errorf("call kind %d to replica %d: %w", kind, to, ErrCallUnreachable)
}

var errBadCall = errors.New("malformed call request")

// decodeCall splits a request body.
func decodeCall(b []byte) (kind uint8, timeout uint64, payload []byte, err error) {
	if len(b) < 2 {
		return 0, 0, nil, errBadCall
	}
	timeout, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return 0, 0, nil, errBadCall
	}
	return b[0], timeout, b[1+n:], nil
}
