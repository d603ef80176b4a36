package session

import (
	"errors"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// EntryKind is the kind of a committed session-plane log entry.
type EntryKind uint8

// Entry kinds.
const (
	EntryRegister EntryKind = 1
	EntryLogout   EntryKind = 2
)

// SyntheticLogoutRequest is the request number of the Logout the server
// commits on a client's behalf when its connection goes away
// (semantics.md §1.9).
const SyntheticLogoutRequest = ^uint64(0)

// Entry is a session-plane operation as it is committed to the metadata
// log. Op and Timestamp are assigned by the log.
type Entry struct {
	// Op is the log position; for a Register it becomes the session epoch.
	Op   uint64
	Kind EntryKind
	// Client is the client id the entry concerns.
	Client wire.Uint128
	// Session is the epoch a Logout ends (ignored for Register).
	Session uint64
	// Request is the request number of a Logout (SyntheticLogoutRequest for
	// a disconnect).
	Request uint64
	// UserID is the authenticated user of a Register.
	UserID uint32
	// Timestamp is the commit time in microseconds since the Unix epoch.
	Timestamp uint64
}

// Log commits entries in a total order and applies each to its state
// machines before Append returns. The metadata log of the next step
// implements it durably; MemLog is the in-memory version.
type Log interface {
	Append(e Entry) (Entry, error)
}

// ErrOutcomeUnknown, wrapped by a Log's Append error, means the entry may
// still commit (a replicated log lost track of it): the Register answer
// is 57 instead of 58.
var ErrOutcomeUnknown = errors.New("session: outcome of the log append unknown")

// ErrLogClosed is returned by Append after Close.
var ErrLogClosed = errors.New("session: log closed")

// MemLog is an in-memory Log: positions start at 1 and grow by one per
// entry; appliers run under the log's lock, so they see entries in commit
// order.
type MemLog struct {
	mu       sync.Mutex
	op       uint64 // last assigned position; guarded by mu
	closed   bool   // guarded by mu
	now      func() time.Time
	appliers []func(Entry)
}

// NewMemLog returns a MemLog that stamps entries with now (time.Now when
// nil) and applies them to appliers in order.
func NewMemLog(now func() time.Time, appliers ...func(Entry)) *MemLog {
	if now == nil {
		now = time.Now
	}
	return &MemLog{now: now, appliers: appliers}
}

// Append implements Log.
func (l *MemLog) Append(e Entry) (Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Entry{}, ErrLogClosed
	}
	l.op++
	e.Op = l.op
	e.Timestamp = uint64(l.now().UnixMicro())
	for _, a := range l.appliers {
		a(e)
	}
	return e, nil
}

// Close makes later Appends fail.
func (l *MemLog) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}
