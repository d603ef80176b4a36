//go:build !windows

package clustertest

import (
	"context"
	"errors"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// requestTimeout bounds every request of a test client: a frozen node
// makes its requests time out (outcome unknown) instead of hanging.
const requestTimeout = 2 * time.Second

// session is one test client's connection, following the leader the way
// the SDKs do (cluster-contract.md §4): log in, read the metadata, move to
// the Leader (at most 3 redirects), stay when none is known. It is owned
// by one goroutine.
type session struct {
	h    *Harness
	conn *local.Conn
	node int
	// next is the node to try when no leader is known.
	next int
	// since58 is when the current run of 58 answers began (zero if none).
	since58 time.Time
	// id, when set, is the client id of every connection (a client that
	// keeps its identity across reconnects); otherwise each connection has
	// a new one.
	id wire.Uint128
}

func newSession(h *Harness, first int) *session { return &session{h: h, node: -1, next: first} }

// drop closes the connection (it is re-established on the next ensure).
func (s *session) drop() {
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.node = nil, -1
	}
	s.since58 = time.Time{}
}

// ensure returns a logged-in connection to the node believed to lead, or
// an error when no node could be reached just now.
func (s *session) ensure() (*local.Conn, error) {
	if s.conn != nil {
		return s.conn, nil
	}
	target := s.next
	s.next = (s.next + 1) % s.h.N()
	for redirects := 0; ; redirects++ {
		c, err := s.dial(target)
		if err != nil {
			return nil, err
		}
		m, err := c.ClusterMetadata()
		if err != nil {
			c.Close()
			return nil, err
		}
		l := local.LeaderIndex(m)
		if l < 0 || l == target || redirects == 3 {
			s.conn, s.node = c, target
			return c, nil
		}
		c.Close()
		target = l
	}
}

func (s *session) dial(i int) (*local.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c, err := local.Dial(ctx, s.h.Addr(i))
	if err != nil {
		return nil, err
	}
	c.Timeout = requestTimeout
	if !s.id.IsZero() {
		c.ID = s.id
	}
	if err := c.Login(local.RootUsername, local.RootPassword); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// classify turns a request error into an outcome; it drops the
// connection after an I/O error or an eviction, and after two seconds of
// 58 answers (the SDKs' failover check), so the next request finds the
// leader again.
func (s *session) classify(err error) (Outcome, uint32) {
	if err == nil || errors.Is(err, local.ErrDuplicate) {
		s.since58 = time.Time{}
		return OK, 0
	}
	var ioe *local.IOError
	if errors.As(err, &ioe) {
		s.drop()
		if ioe.Sent {
			return Unknown, 0
		}
		return Failed, 0
	}
	var ev *local.EvictionError
	if errors.As(err, &ev) {
		s.drop()
		return Failed, 0
	}
	code := local.ErrorCode(err)
	switch code {
	case 57:
		return Unknown, code
	case 58:
		if s.since58.IsZero() {
			s.since58 = time.Now()
		} else if time.Since(s.since58) > 2*time.Second {
			s.drop()
		}
	}
	return Failed, code
}
