package replication

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// Waiters hands the outcome of applied entries to the goroutines of this
// node that proposed them. A proposer tags its entry with the nonce Add
// returns; the state machine, applying the entry, calls Deliver with that
// nonce. Nonces start at a random point per process, so an entry proposed
// before a restart and applied after it never matches a new waiter. Safe
// for concurrent use.
type Waiters[T any] struct {
	next atomic.Uint64
	mu   sync.Mutex
	m    map[uint64]chan T // guarded by mu
}

// NewWaiters returns an empty registry.
func NewWaiters[T any]() *Waiters[T] {
	var b [8]byte
	_, _ = rand.Read(b[:])
	w := &Waiters[T]{m: map[uint64]chan T{}}
	w.next.Store(binary.LittleEndian.Uint64(b[:]) | 1)
	return w
}

// Add registers a waiter: its nonce (never 0) and the channel its outcome
// arrives on (buffered; Deliver never blocks).
func (w *Waiters[T]) Add() (uint64, chan T) {
	n := w.next.Add(1)
	if n == 0 {
		n = w.next.Add(1)
	}
	ch := make(chan T, 1)
	w.mu.Lock()
	w.m[n] = ch
	w.mu.Unlock()
	return n, ch
}

// Remove drops the waiter of nonce n (its proposer stopped waiting).
func (w *Waiters[T]) Remove(n uint64) {
	w.mu.Lock()
	delete(w.m, n)
	w.mu.Unlock()
}

// Deliver hands v to the waiter of nonce n, if one waits, and reports
// whether one did.
func (w *Waiters[T]) Deliver(n uint64, v T) bool {
	w.mu.Lock()
	ch := w.m[n]
	delete(w.m, n)
	w.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- v
	return true
}
