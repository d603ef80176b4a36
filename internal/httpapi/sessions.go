package httpapi

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// Write caps of http-api.md §8: awaited partition writes per session and
// per node.
const (
	maxSessionPartitionWrites = 32
	maxNodePartitionWrites    = 128
)

// credential is a verified bearer.
type credential struct {
	// key names the credential's session: "jwt:<jti>" or "pat:<hash>".
	key  string
	user auth.UserID
	// expiry ends the session (zero: never, a PAT without expiry).
	expiry time.Time
	// jti and exp are set for a JWT (logout revokes them).
	jti string
	exp int64
}

// httpSession is one credential's client-table entry (http-api.md §8):
// registered on the first write, control-plane writes one at a time.
type httpSession struct {
	key    string
	user   auth.UserID
	client wire.Uint128
	expiry time.Time

	// ctrl serialises control-plane writes (one in flight per session).
	ctrl sync.Mutex
	// regMu guards conn: registration happens once, on first use, and
	// again after the session was evicted.
	regMu sync.Mutex
	conn  *session.Conn // guarded by regMu
	// next is the last request number used.
	next atomic.Uint64
	// partitionWrites counts awaited partition writes.
	partitionWrites atomic.Int32
}

// sessionTable holds the live HTTP sessions, capped at
// clients_table_max / 2; expired ones are swept when admitting a new one.
type sessionTable struct {
	mgr *session.Manager
	now func() time.Time
	max int

	mu sync.Mutex
	m  map[string]*httpSession // guarded by mu

	nodePartitionWrites atomic.Int32
}

func newSessionTable(mgr *session.Manager, now func() time.Time, max int) *sessionTable {
	return &sessionTable{mgr: mgr, now: now, max: max, m: map[string]*httpSession{}}
}

// get returns the credential's session, creating it (not yet registered);
// nil when the table is full of live sessions. Expired sessions swept to
// make room are logged out before get returns (outside the table lock).
func (t *sessionTable) get(c *credential) *httpSession {
	s, expired := t.getLocked(c)
	for _, e := range expired {
		t.end(e)
	}
	return s
}

func (t *sessionTable) getLocked(c *credential) (*httpSession, []*httpSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[c.key]; ok {
		return s, nil
	}
	var expired []*httpSession
	if len(t.m) >= t.max {
		now := t.now()
		for k, s := range t.m {
			if !s.expiry.IsZero() && s.expiry.Before(now) {
				delete(t.m, k)
				expired = append(expired, s)
			}
		}
		if len(t.m) >= t.max {
			return nil, expired
		}
	}
	s := &httpSession{key: c.key, user: c.user, client: newClientID(), expiry: c.expiry}
	t.m[c.key] = s
	return s, expired
}

// drop removes the credential's session and returns it (nil if none).
func (t *sessionTable) drop(key string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[key]
	delete(t.m, key)
	return s
}

// end commits the Logout of a registered session.
func (t *sessionTable) end(s *httpSession) {
	s.regMu.Lock()
	c := s.conn
	s.conn = nil
	s.regMu.Unlock()
	if c != nil {
		t.mgr.Logout(c, s.next.Add(1))
	}
}

// conn returns the session's bound connection, registering it first.
func (t *sessionTable) conn(s *httpSession) (*session.Conn, error) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if s.conn != nil {
		return s.conn, nil
	}
	c, err := t.mgr.RegisterTrusted(s.client, s.user, "http")
	if err != nil {
		return nil, err
	}
	s.conn = c
	return c, nil
}

// lost forgets a connection whose session ended by eviction, so the next
// write registers again.
func (s *httpSession) lost(c *session.Conn) {
	s.regMu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.regMu.Unlock()
}

// newClientID mints a random non-zero client id.
func newClientID() wire.Uint128 {
	var b [16]byte
	for {
		_, _ = rand.Read(b[:])
		u := wire.Uint128{Lo: binary.LittleEndian.Uint64(b[:8]), Hi: binary.LittleEndian.Uint64(b[8:])}
		if !u.IsZero() {
			return u
		}
	}
}
