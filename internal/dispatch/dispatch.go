package dispatch

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// maxCode is the highest command code the table can hold.
const maxCode = 1023

// maxRetainedScratch bounds the reply scratch buffer an Exchange keeps
// between requests; larger ones are dropped after use.
const maxRetainedScratch = 64 << 10

// Handler serves one command. It answers through the Exchange helpers
// (Reply, Deny, Evict); an Exchange left unanswered gets FeatureUnavailable.
type Handler func(x *Exchange)

// Exchange is one request and its answer. Transports keep Exchanges in a
// pool: a handler must not retain it, its Body or Conn fields after it
// returns.
type Exchange struct {
	// Header and Body are the decoded request; Body is valid until the
	// handler returns.
	Header wire.RequestHeader
	Body   []byte
	// Conn is the session state of the connection the request came on.
	Conn *session.Conn
	// Info is the command registry entry (zero for Register).
	Info wire.CommandInfo

	// Head is the encoded answer header (reply or eviction).
	Head [wire.HeaderSize]byte
	// Out is the answer body written after Head (nil for evictions).
	Out []byte
	// Tail, when set, is more answer body written after Out (file extents
	// of a poll reply); the Head's size counts it. The transport calls
	// Tail.Release after writing, or when the answer is dropped.
	Tail Tail
	// Answered is set once Head holds an answer.
	Answered bool

	scratch   []byte
	d         *Dispatcher
	table     bool // admitted by the client table and not yet committed
	evicted   bool
	committed bool
}

// Scratch returns an empty buffer for building a reply body; the bytes
// stay valid until the Exchange is reset.
func (x *Exchange) Scratch() []byte { return x.scratch[:0] }

// Tail is answer body that is not in memory: the transport writes it with
// WriteTo after Head and Out (on plain TCP the writer is the socket, so a
// file-backed Tail can use sendfile).
type Tail interface {
	// Len is the number of bytes WriteTo writes.
	Len() int64
	// WriteTo writes exactly Len bytes to w.
	WriteTo(w io.Writer) (int64, error)
	// Release frees the Tail's resources; it is called exactly once.
	Release()
}

// Reset clears the Exchange for reuse, keeping a bounded scratch buffer.
// A Tail still attached is released.
func (x *Exchange) Reset() {
	if x.Tail != nil {
		x.Tail.Release()
	}
	s := x.scratch
	if cap(s) > maxRetainedScratch {
		s = nil
	}
	*x = Exchange{scratch: s[:0]}
}

// Options configure a Dispatcher.
type Options struct {
	Logger *slog.Logger
	// Groups lists a client's consumer-group memberships for GET_ME and
	// GET_CLIENT(S); nil means none (groups arrive with a later step).
	Groups func(client wire.Uint128) []wire.ClientConsumerGroup
	// Observer, when set, is told about every served request (observe.go).
	Observer Observer
	// MetadataLeader, when set (cluster mode), reports whether this node
	// leads the metadata group; elsewhere metadata writes are answered
	// with a result-framed 58 before the client table sees them
	// (cluster-contract.md §3: not forwarded).
	MetadataLeader func() bool
	// LoginReady, when set (cluster mode), reports whether this node's
	// metadata holds the root user yet; until then logins are answered
	// with a result-framed 58 (a fresh cluster before its first leader
	// committed the root user), which SDKs retry.
	LoginReady func() bool
	// Retried, when set, sees a metadata request whose reply the client
	// table holds (a retry) before that reply is sent again; a non-zero
	// result code answers the retry instead (metadata.Store.AwaitRetried:
	// a retried purge still waiting for its partitions gets 57 again).
	Retried func(cmd wire.Command, body []byte) uint32
}

// Dispatcher routes requests. It is safe for concurrent use by every
// connection; Handle may also be called while requests are served (the
// table is read with one atomic load per request).
type Dispatcher struct {
	sessions *session.Manager
	users    auth.Store
	logger   *slog.Logger
	groups   func(wire.Uint128) []wire.ClientConsumerGroup
	observer Observer
	leader   func() bool
	ready    func() bool
	retried  func(wire.Command, []byte) uint32
	handlers [maxCode + 1]atomic.Pointer[Handler]
}

// New returns a Dispatcher over the session manager and the user store,
// with the handlers of this step registered (PING, GET_ME, GET_CLIENT,
// GET_CLIENTS, FLUSH_UNSAVED_BUFFER).
func New(sessions *session.Manager, users auth.Store, opts Options) *Dispatcher {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	d := &Dispatcher{sessions: sessions, users: users, logger: opts.Logger, groups: opts.Groups, observer: opts.Observer, leader: opts.MetadataLeader, ready: opts.LoginReady, retried: opts.Retried}
	d.registerSystem()
	return d
}

// Handle registers h for code, replacing any earlier handler. Codes of
// replicated commands receive requests the client table has admitted.
func (d *Dispatcher) Handle(code wire.Command, h Handler) {
	if code > maxCode {
		panic("dispatch: command code out of range")
	}
	if h == nil {
		d.handlers[code].Store(nil)
		return
	}
	d.handlers[code].Store(&h)
}

// Sessions returns the session manager.
func (d *Dispatcher) Sessions() *session.Manager { return d.sessions }

// Users returns the user store.
func (d *Dispatcher) Users() auth.Store { return d.users }

func (d *Dispatcher) handler(code wire.Command) Handler {
	if code > maxCode {
		return nil
	}
	if h := d.handlers[code].Load(); h != nil {
		return *h
	}
	return nil
}

// Serve answers the request in x (Header, Body and Conn set). On return
// x.Head/x.Out hold the answer.
func (d *Dispatcher) Serve(x *Exchange) {
	if d.observer != nil {
		defer d.observe(x, time.Now())
	}
	x.d = d
	h := &x.Header
	c := x.Conn
	switch {
	case h.Client.IsZero():
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	case !h.Operation.ClientAllowed():
		x.Evict(wire.EvictInvalidRequestOperation)
		return
	case h.Operation == wire.OpRegister && (h.Session != 0 || h.Request != 0):
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	case h.Operation != wire.OpRegister && h.Operation != wire.OpNonReplicated && (h.Session == 0 || h.Request == 0):
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if !h.RequestChecksum.IsZero() && (h.RequestChecksum.Hi != 0 || h.RequestChecksum.Lo != xxh3.Hash(x.Body)) {
		x.Deny(wire.ErrInvalidFormat.Code)
		return
	}
	d.sessions.Touch(c)
	switch h.Operation {
	case wire.OpNonReplicated:
		d.serveRead(x)
	case wire.OpRegister:
		d.serveLogin(x)
	case wire.OpLogout:
		x.Info, _ = wire.LookupCommand(wire.CmdLogoutUser)
		if code := d.sessions.Logout(c, h.Request); code != 0 {
			x.Deny(code)
			return
		}
		x.Reply(nil)
	default:
		d.serveReplicated(x)
	}
}

func (d *Dispatcher) serveRead(x *Exchange) {
	code := x.Header.Code
	info, known := wire.LookupCommand(code)
	if known && info.Legacy {
		x.Evict(wire.EvictMalformedLogin)
		return
	}
	if code == wire.CmdAttachSession {
		x.Info = info
		d.serveAttach(x) // attach.go: it binds an unbound connection
		return
	}
	if code != wire.CmdPing && x.Conn.Session() == 0 {
		x.Deny(wire.ErrUnauthenticated.Code)
		return
	}
	if !known {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	x.Info = info
	if info.Replicated() {
		x.Deny(wire.ErrFeatureUnavailable.Code)
		return
	}
	d.run(x)
}

func (d *Dispatcher) serveLogin(x *Exchange) {
	x.Info, _ = wire.LookupCommand(wire.CmdLoginRegister)
	if d.ready != nil && !d.ready() {
		x.Reply(wire.AppendResultError(x.Scratch(), wire.ErrTransientNotAccepted.Code))
		return
	}
	res := d.sessions.Login(x.Conn, x.Header.Client, x.Body)
	switch {
	case res.Evict != 0:
		x.Evict(res.Evict)
	case res.Transient != 0:
		x.Reply(wire.AppendResultError(x.Scratch(), res.Transient))
	default:
		body := wire.AppendResultOK(x.Scratch())
		x.Reply(res.Reply.AppendTo(body))
	}
}

func (d *Dispatcher) serveReplicated(x *Exchange) {
	h := &x.Header
	info, ok := wire.CommandForOperation(h.Operation)
	if !ok {
		x.Evict(wire.EvictInvalidRequestOperation)
		return
	}
	x.Info = info
	if x.Conn.Session() == 0 {
		x.Evict(wire.EvictNoSession)
		return
	}
	if info.Plane == wire.PlaneMetadata {
		if d.leader != nil && !d.leader() {
			x.Result(wire.ErrTransientNotAccepted.Code)
			return
		}
		verdict, frame := d.sessions.Table().Admit(h.Client, h.Session, h.Request, h.RequestChecksum)
		switch verdict {
		case session.Execute:
			x.table = true
		case session.Replay:
			if d.retried != nil {
				if code := d.retried(info.Code, x.Body); code != 0 {
					x.Result(code)
					return
				}
			}
			x.replay(frame)
			return
		case session.InFlight:
			x.Result(wire.ErrTransientNotCommitted.Code)
			return
		case session.AlreadyApplied:
			x.Result(wire.ErrRequestAlreadyApplied.Code)
			return
		case session.NoSession:
			x.Evict(wire.EvictNoSession)
			return
		case session.SessionTooLow:
			x.Evict(wire.EvictSessionTooLow)
			return
		case session.SessionAhead:
			x.Evict(wire.EvictSessionError)
			return
		default:
			x.Deny(wire.ErrInvalidFormat.Code)
			return
		}
	}
	d.run(x)
	if x.table && !x.committed {
		d.sessions.Table().Abort(h.Client, h.Request)
	}
}

// run calls the command's handler; a missing handler or an unanswered
// exchange gets FeatureUnavailable (5): the command exists but this build
// does not serve it yet.
func (d *Dispatcher) run(x *Exchange) {
	if hd := d.handler(x.Info.Code); hd != nil {
		hd(x)
	}
	if !x.Answered {
		x.Deny(wire.ErrFeatureUnavailable.Code)
	}
}

// directOp is the reply header `op` of a direct (uncommitted) answer: the
// connection's session epoch, or 0 for a partition-plane denial
// (framing.md, ReplyHeader).
func (x *Exchange) directOp() uint64 {
	if x.Header.Operation.Partition() {
		return 0
	}
	return x.Conn.Session()
}

func (x *Exchange) writeReply(op wire.Operation, status uint32, opField uint64, body []byte) {
	x.writeReplyTail(op, status, opField, body, nil)
}

func (x *Exchange) writeReplyTail(op wire.Operation, status uint32, opField uint64, body []byte, tail Tail) {
	h := &x.Header
	if x.Tail != nil {
		x.Tail.Release()
	}
	size := int64(wire.HeaderSize + len(body))
	if tail != nil {
		size += tail.Len()
	}
	// Single node: cluster id 0, except that non-replicated replies echo
	// the request's value (framing.md, common prologue).
	var cluster wire.Uint128
	if h.Operation == wire.OpNonReplicated {
		cluster = h.Cluster
	}
	r := wire.ReplyHeader{
		Prologue:        wire.Prologue{Cluster: cluster, Size: uint32(size)},
		RequestChecksum: h.RequestChecksum,
		Client:          h.Client,
		Op:              opField,
		Timestamp:       h.Timestamp,
		Request:         h.Request,
		Operation:       op,
		Status:          status,
	}
	r.Encode(x.Head[:])
	x.Out = body
	x.Tail = tail
	x.Answered = true
}

// Reply answers with status 0 and body, with the reply operation of the
// command (64/65/68 for the rewritten ones) or the request's own.
func (x *Exchange) Reply(body []byte) {
	op := x.Header.Operation
	if x.Info.Code != 0 && x.Info.ReplyOperation != 0 && op != wire.OpNonReplicated {
		op = x.Info.ReplyOperation
	}
	x.writeReply(op, 0, x.directOp(), body)
}

// ReplyTail answers like Reply with body followed by tail (a plain,
// non-replicated read answer such as a poll reply). The caller keeps the
// frame within the transport's frame limit. tail is released by the
// transport (or by Reset) once written or dropped.
func (x *Exchange) ReplyTail(body []byte, tail Tail) {
	op := x.Header.Operation
	if x.Info.Code != 0 && x.Info.ReplyOperation != 0 && op != wire.OpNonReplicated {
		op = x.Info.ReplyOperation
	}
	x.writeReplyTail(op, 0, x.directOp(), body, tail)
}

// Result answers a result-framed command with the committed-rejection
// shape [1][0][code] and status 0 (also used for transient 57/58).
func (x *Exchange) Result(code uint32) {
	x.Reply(wire.AppendResultError(x.Scratch(), code))
}

// MarkCommitted turns the answer in Head into a committed reply of a
// replicated log (cluster mode): the header carries the cluster id, the
// view (raft term), the replica that committed it, and op = commit = the
// log index.
func (x *Exchange) MarkCommitted(cluster wire.Uint128, view uint32, replica uint8, op uint64) {
	var r wire.ReplyHeader
	_ = r.Decode(x.Head[:])
	r.Cluster, r.View, r.Replica, r.Op, r.Commit = cluster, view, replica, op, op
	r.Encode(x.Head[:])
}

// Deny answers a pre-commit denial: status code, empty body, the
// request's own operation.
func (x *Exchange) Deny(code uint32) {
	x.writeReply(x.Header.Operation, code, x.directOp(), nil)
}

// Commit marks a metadata-plane reply as committed at log position op:
// the reply header carries op, and the whole frame is cached in the client
// table for replay. The frame is copied, so the Exchange may be reused.
func (x *Exchange) Commit(op uint64, body []byte) {
	x.Reply(body)
	var r wire.ReplyHeader
	_ = r.Decode(x.Head[:])
	r.Op, r.Commit = op, op
	r.Encode(x.Head[:])
	if x.table {
		frame := make([]byte, 0, wire.HeaderSize+len(body))
		frame = append(append(frame, x.Head[:]...), body...)
		x.d.sessions.Table().Commit(x.Header.Client, x.Header.Request, x.Header.RequestChecksum, op, frame)
		x.committed = true
	}
}

// SendCommitted answers with a committed reply frame (header and body)
// that the metadata plane built and already recorded in the client table;
// the request counts as committed, so it is not aborted afterwards. The
// frame must stay unmodified.
func (x *Exchange) SendCommitted(frame []byte) {
	x.replay(frame)
	x.committed = true
}

// Relay answers with a whole reply frame (header and body) built by
// another node: the answer of the partition's leader to a request this
// node forwarded, sent to the client byte for byte. The frame must stay
// unmodified.
func (x *Exchange) Relay(frame []byte) {
	if x.Tail != nil {
		x.Tail.Release()
		x.Tail = nil
	}
	x.replay(frame)
}

func (x *Exchange) replay(frame []byte) {
	copy(x.Head[:], frame[:wire.HeaderSize])
	x.Out = frame[wire.HeaderSize:]
	x.Answered = true
}

// Evict answers with an Eviction frame and ends the connection's session.
func (x *Exchange) Evict(reason wire.EvictionReason) {
	e := wire.EvictionHeader{Client: x.Header.Client, Reason: reason}
	if reason == wire.EvictIncompatibleProtocol {
		e.ServerProtocolVersion, e.ServerProtocolVersionMin = wire.ProtocolVersion, wire.ProtocolVersionMin
	}
	e.Encode(x.Head[:])
	x.Out = nil
	if x.Tail != nil {
		x.Tail.Release()
		x.Tail = nil
	}
	x.Answered = true
	x.evicted = true
	if x.d != nil {
		x.d.logger.Debug("session evicted", "conn", x.Conn.ID, "addr", x.Conn.Addr, "reason", reason.String(), "operation", x.Header.Operation.String())
		x.d.sessions.Evicted(x.Conn)
	}
}

// Evicted reports whether the answer is an eviction.
func (x *Exchange) Evicted() bool { return x.evicted }

// User returns the authenticated user of the connection, when bound and
// still present in the store.
func (x *Exchange) User() (auth.User, bool) {
	b, ok := x.Conn.Binding()
	if !ok {
		return auth.User{}, false
	}
	return x.d.users.UserByID(b.UserID)
}
