// Package connset is the registry of a listener's open connections (TCP,
// QUIC, WebSocket): admission under the connection cap, the count, and the
// graceful shutdown that lets each connection finish the request it is
// serving before it ends.
package connset

import (
	"context"
	"sync"
	"sync/atomic"
)

// Conn is what a Set needs of a connection.
type Conn interface {
	comparable
	// Stop asks the connection to end once the request it serves (if
	// any) is answered; it must not block.
	Stop()
	// Abort closes the connection at once.
	Abort()
}

// Set holds the open connections of one listener. Its zero value is ready
// to use; it is safe for concurrent use.
type Set[C Conn] struct {
	mu       sync.Mutex
	conns    map[C]struct{} // guarded by mu
	shutdown bool           // guarded by mu
	active   atomic.Int64
	wg       sync.WaitGroup
}

// Add registers the connection newConn returns, called under the set's
// lock so that admission, the cap and Shutdown agree. It returns false,
// without calling newConn, after Shutdown or when limit (> 0) connections
// are open; the caller then closes what it accepted.
func (s *Set[C]) Add(limit int, newConn func() C) (C, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero C
	if s.shutdown || (limit > 0 && s.active.Load() >= int64(limit)) {
		return zero, false
	}
	if s.conns == nil {
		s.conns = map[C]struct{}{}
	}
	c := newConn()
	s.conns[c] = struct{}{}
	s.active.Add(1)
	s.wg.Add(1)
	return c, true
}

// Remove unregisters c once it has ended (exactly once per Add).
func (s *Set[C]) Remove(c C) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.active.Add(-1)
	s.wg.Done()
}

// Len is the number of open connections.
func (s *Set[C]) Len() int { return int(s.active.Load()) }

// Full reports whether limit (> 0) connections are open: the cheap check
// before accepting; Add is the authoritative one.
func (s *Set[C]) Full(limit int) bool { return limit > 0 && s.active.Load() >= int64(limit) }

// Stopping reports whether Shutdown has begun.
func (s *Set[C]) Stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutdown
}

// Shutdown refuses new connections, runs closeListener (stop accepting),
// asks every connection to Stop and waits until all have been removed.
// When ctx ends first, the remaining ones are Aborted, and Shutdown still
// waits for them, then returns ctx.Err(); otherwise closeListener's error.
func (s *Set[C]) Shutdown(ctx context.Context, closeListener func() error) error {
	s.mu.Lock()
	s.shutdown = true
	conns := make([]C, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := closeListener()
	for _, c := range conns {
		c.Stop()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return err
	case <-ctx.Done():
		for _, c := range conns {
			c.Abort()
		}
		<-done
		return ctx.Err()
	}
}
