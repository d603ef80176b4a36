package session

import (
	"errors"
	"sort"
	"sync"

	"github.com/iggo-dev/iggo/wire"
)

// ReplyRingSize is the number of committed replies the client table keeps
// per client for replay (semantics.md §1.5).
const ReplyRingSize = 5

// Verdict is the client table's decision about a metadata-plane request
// (semantics.md §1.5, "Checking a metadata request").
type Verdict uint8

// Verdicts, and the answer the dispatcher gives for each.
const (
	// Execute: a new request; it is now in flight until Commit or Abort.
	Execute Verdict = iota + 1
	// Replay: a retry whose reply is cached; resend those bytes verbatim.
	Replay
	// InFlight: a request of this client is being committed; answer the
	// committed-rejection shape with TransientNotCommitted (57).
	InFlight
	// AlreadyApplied: at or below the watermark and no longer cached;
	// answer the committed-rejection shape with RequestAlreadyApplied (59).
	AlreadyApplied
	// NoSession: no entry for the client; Eviction(1 NoSession).
	NoSession
	// SessionTooLow: the request carries an epoch older than the client's
	// latest Register (a zombie); Eviction(7 SessionTooLow).
	SessionTooLow
	// SessionAhead: the request carries an epoch the server never issued.
	// The reference drops it silently; Iggo answers Eviction(12
	// SessionError) so the client re-logs in instead of timing out.
	SessionAhead
	// ChecksumConflict: the request number is reused with a different
	// request_checksum. The reference drops it silently; Iggo answers a
	// status-deny InvalidFormat (4), the request_checksum error code.
	ChecksumConflict
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case Execute:
		return "Execute"
	case Replay:
		return "Replay"
	case InFlight:
		return "InFlight"
	case AlreadyApplied:
		return "AlreadyApplied"
	case NoSession:
		return "NoSession"
	case SessionTooLow:
		return "SessionTooLow"
	case SessionAhead:
		return "SessionAhead"
	case ChecksumConflict:
		return "ChecksumConflict"
	}
	return "Verdict(?)"
}

// Table is the metadata-plane client table. It is driven by committed log
// entries (Apply) and committed replies (Commit), never by the clock, so a
// metadata log can rebuild it by replay or restore it from a snapshot.
type Table interface {
	// Apply applies a committed Register or Logout.
	Apply(e Entry)
	// Admit checks a metadata request. For Replay the cached reply frame is
	// returned (read-only). Execute marks the request in flight.
	Admit(client wire.Uint128, session, request uint64, checksum wire.Uint128) (Verdict, []byte)
	// Commit records the committed reply of an executed request: the
	// watermark advances and the reply enters the ring. reply must not be
	// modified afterwards.
	Commit(client wire.Uint128, request uint64, checksum wire.Uint128, commitOp uint64, reply []byte)
	// Abort clears the in-flight mark of a request that was denied before
	// commit.
	Abort(client wire.Uint128, request uint64)
	// Epoch returns the client's current session epoch.
	Epoch(client wire.Uint128) (uint64, bool)
	// Len is the number of clients in the table.
	Len() int
	// Snapshot returns the persistent part of every entry, by slot.
	Snapshot() []ClientRecord
	// Restore replaces the table's contents with a snapshot.
	Restore(records []ClientRecord) error
}

// ClientRecord is the persistent part of a client-table entry: what a
// metadata snapshot keeps (semantics.md §1.5, "Persistence"). Older ring
// entries are not persisted.
type ClientRecord struct {
	Slot              int
	Client            wire.Uint128
	Epoch             uint64
	UserID            uint32
	Watermark         uint64
	WatermarkChecksum wire.Uint128
	// RegisterOp is the log position of the Register (equal to Epoch).
	RegisterOp uint64
	// Latest is the newest cached reply, if any.
	Latest *CachedReply
}

// CachedReply is one committed reply kept for replay.
type CachedReply struct {
	Request  uint64
	Checksum wire.Uint128
	CommitOp uint64
	Frame    []byte
}

type clientEntry struct {
	slot              int
	client            wire.Uint128
	epoch             uint64
	userID            uint32
	watermark         uint64
	watermarkChecksum wire.Uint128
	registerOp        uint64
	inFlight          uint64 // request number in flight, 0 = none
	// ended is set when the session ended with its connection (a synthetic
	// Logout): the slot keeps its dedup state for a resuming client, but no
	// session is live until the client registers again. Not persisted: after
	// a restart no connection survives, and a resuming client registers anew.
	ended   bool
	ring    [ReplyRingSize]CachedReply
	ringLen int // number of valid ring entries; newest at ringLen-1
}

// latestOp is the commit op of the newest cached reply (the Register
// counts as one), the key of capacity eviction.
func (e *clientEntry) latestOp() uint64 {
	op := e.registerOp
	if e.ringLen > 0 && e.ring[e.ringLen-1].CommitOp > op {
		op = e.ring[e.ringLen-1].CommitOp
	}
	return op
}

// ClientTable is the in-memory Table.
type ClientTable struct {
	mu       sync.Mutex
	capacity int
	slots    []*clientEntry                // index = slot; nil = free; guarded by mu
	byClient map[wire.Uint128]*clientEntry // guarded by mu
	onEvict  func(client wire.Uint128)
}

// NewClientTable returns a table with capacity slots (clients_table_max).
// onEvict, when non-nil, is told which client lost its slot to capacity
// eviction (it is called with the table's lock held and must not call back).
func NewClientTable(capacity int, onEvict func(client wire.Uint128)) *ClientTable {
	return &ClientTable{capacity: max(capacity, 1), byClient: map[wire.Uint128]*clientEntry{}, onEvict: onEvict}
}

// Apply implements Table.
//
// An explicit Logout frees the client's slot. The Logout the server
// commits when a connection goes away or is evicted
// (SyntheticLogoutRequest) ends the session but keeps the slot's
// watermark and cached replies: a client that resumes under the same id
// (upstream-framing.md, "client identity is retained") registers again
// with a higher epoch and its retried request is answered from the cache
// instead of running twice. The reference frees the slot here
// (semantics.md §1.9); keeping it is what makes reconnect-and-retry
// exactly-once, and capacity eviction still bounds the table.
func (t *ClientTable) Apply(e Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case EntryRegister:
		t.register(e)
	case EntryLogout:
		ent, ok := t.byClient[e.Client]
		if !ok || ent.epoch != e.Session {
			return
		}
		if e.Request == SyntheticLogoutRequest {
			ent.inFlight, ent.ended = 0, true
			return
		}
		t.remove(ent)
	}
}

// register applies a committed Register. A re-register of a known client
// keeps its watermark and cached replies and gets the new epoch; a new
// client takes the lowest free slot, evicting the entry whose latest
// cached reply is oldest (ties: lowest slot) when the table is full.
// Caller must hold t.mu.
func (t *ClientTable) register(e Entry) {
	if ent, ok := t.byClient[e.Client]; ok {
		ent.epoch, ent.registerOp, ent.userID, ent.inFlight, ent.ended = e.Op, e.Op, e.UserID, 0, false
		return
	}
	if len(t.byClient) >= t.capacity {
		var victim *clientEntry
		for _, s := range t.slots {
			if s != nil && (victim == nil || s.latestOp() < victim.latestOp()) {
				victim = s
			}
		}
		if victim != nil {
			t.remove(victim)
			if t.onEvict != nil {
				t.onEvict(victim.client)
			}
		}
	}
	slot := -1
	for i, s := range t.slots {
		if s == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		slot = len(t.slots)
		t.slots = append(t.slots, nil)
	}
	ent := &clientEntry{slot: slot, client: e.Client, epoch: e.Op, registerOp: e.Op, userID: e.UserID}
	t.slots[slot] = ent
	t.byClient[e.Client] = ent
}

// remove frees ent's slot. Caller must hold t.mu.
func (t *ClientTable) remove(ent *clientEntry) {
	t.slots[ent.slot] = nil
	delete(t.byClient, ent.client)
}

func conflict(a, b wire.Uint128) bool { return !a.IsZero() && !b.IsZero() && a != b }

// Admit implements Table, in the order of semantics.md §1.5: in flight,
// no entry, epoch too low, epoch ahead, new request, checksum conflict,
// cached replay, already applied.
func (t *ClientTable) Admit(client wire.Uint128, session, request uint64, checksum wire.Uint128) (Verdict, []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ent, ok := t.byClient[client]
	if !ok || ent.ended {
		return NoSession, nil
	}
	if ent.inFlight != 0 {
		return InFlight, nil
	}
	switch {
	case session < ent.epoch:
		return SessionTooLow, nil
	case session > ent.epoch:
		return SessionAhead, nil
	}
	if request > ent.watermark {
		ent.inFlight = request
		return Execute, nil
	}
	if request == ent.watermark && conflict(checksum, ent.watermarkChecksum) {
		return ChecksumConflict, nil
	}
	for i := ent.ringLen - 1; i >= 0; i-- {
		if c := &ent.ring[i]; c.Request == request {
			if conflict(checksum, c.Checksum) {
				return ChecksumConflict, nil
			}
			return Replay, c.Frame
		}
	}
	return AlreadyApplied, nil
}

// Commit implements Table.
func (t *ClientTable) Commit(client wire.Uint128, request uint64, checksum wire.Uint128, commitOp uint64, reply []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ent, ok := t.byClient[client]
	if !ok {
		return
	}
	if ent.inFlight == request {
		ent.inFlight = 0
	}
	if request > ent.watermark {
		ent.watermark, ent.watermarkChecksum = request, checksum
	}
	if ent.ringLen == ReplyRingSize {
		copy(ent.ring[:], ent.ring[1:])
		ent.ringLen--
	}
	ent.ring[ent.ringLen] = CachedReply{Request: request, Checksum: checksum, CommitOp: commitOp, Frame: reply}
	ent.ringLen++
}

// Applied reports whether client's request has already been committed
// (it is at or below the client's watermark), and the cached reply frame
// when the ring still holds it. A replicated log checks it when applying,
// so a request committed twice (retried on a new leader before that
// leader had applied the first copy) changes the state once.
func (t *ClientTable) Applied(client wire.Uint128, request uint64) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ent, ok := t.byClient[client]
	if !ok || request > ent.watermark {
		return nil, false
	}
	for i := ent.ringLen - 1; i >= 0; i-- {
		if c := &ent.ring[i]; c.Request == request {
			return c.Frame, true
		}
	}
	return nil, true
}

// Abort implements Table.
func (t *ClientTable) Abort(client wire.Uint128, request uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ent, ok := t.byClient[client]; ok && ent.inFlight == request {
		ent.inFlight = 0
	}
}

// Epoch implements Table.
func (t *ClientTable) Epoch(client wire.Uint128) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ent, ok := t.byClient[client]
	if !ok || ent.ended {
		return 0, false
	}
	return ent.epoch, true
}

// Len implements Table: the number of live sessions (slots whose session
// ended with its connection are not counted).
func (t *ClientTable) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, ent := range t.byClient {
		if !ent.ended {
			n++
		}
	}
	return n
}

// Snapshot implements Table.
func (t *ClientTable) Snapshot() []ClientRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []ClientRecord
	for _, ent := range t.slots {
		if ent == nil {
			continue
		}
		r := ClientRecord{
			Slot: ent.slot, Client: ent.client, Epoch: ent.epoch, UserID: ent.userID,
			Watermark: ent.watermark, WatermarkChecksum: ent.watermarkChecksum, RegisterOp: ent.registerOp,
		}
		if ent.ringLen > 0 {
			c := ent.ring[ent.ringLen-1]
			r.Latest = &c
		}
		out = append(out, r)
	}
	return out
}

// ErrBadSnapshot reports client records that cannot be restored.
var ErrBadSnapshot = errors.New("session: invalid client table snapshot")

// Restore implements Table. Records must have distinct clients and slots
// within capacity.
func (t *ClientTable) Restore(records []ClientRecord) error {
	rs := append([]ClientRecord(nil), records...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Slot < rs[j].Slot })
	slots := []*clientEntry{}
	byClient := map[wire.Uint128]*clientEntry{}
	for _, r := range rs {
		if r.Slot < 0 || r.Slot >= t.capacity || byClient[r.Client] != nil || r.Client.IsZero() {
			return ErrBadSnapshot
		}
		for len(slots) <= r.Slot {
			slots = append(slots, nil)
		}
		if slots[r.Slot] != nil {
			return ErrBadSnapshot
		}
		ent := &clientEntry{
			slot: r.Slot, client: r.Client, epoch: r.Epoch, userID: r.UserID, watermark: r.Watermark,
			watermarkChecksum: r.WatermarkChecksum, registerOp: r.RegisterOp,
		}
		if r.Latest != nil {
			ent.ring[0] = *r.Latest
			ent.ringLen = 1
		}
		slots[r.Slot] = ent
		byClient[r.Client] = ent
	}
	t.mu.Lock()
	t.slots, t.byClient = slots, byClient
	t.mu.Unlock()
	return nil
}
