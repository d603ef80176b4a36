package connset

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fake ends (is removed) when stopped, unless stubborn; Abort always ends it.
type fake struct {
	set      *Set[*fake]
	stubborn bool
	stopped  atomic.Bool
	aborted  atomic.Bool
	ended    atomic.Bool
}

func (f *fake) end() {
	if f.ended.CompareAndSwap(false, true) {
		go f.set.Remove(f)
	}
}
func (f *fake) Stop() {
	f.stopped.Store(true)
	if !f.stubborn {
		f.end()
	}
}
func (f *fake) Abort() { f.aborted.Store(true); f.end() }

func TestAddCapAndRemove(t *testing.T) {
	var s Set[*fake]
	var made []*fake
	for i := range 3 {
		c, ok := s.Add(2, func() *fake { f := &fake{set: &s}; made = append(made, f); return f })
		if want := i < 2; ok != want {
			t.Fatalf("Add %d: %v, want %v", i, ok, want)
		}
		_ = c
	}
	if len(made) != 2 || s.Len() != 2 || !s.Full(2) || s.Full(0) {
		t.Fatalf("made %d, len %d", len(made), s.Len())
	}
	s.Remove(made[0])
	if s.Len() != 1 || s.Full(2) {
		t.Fatalf("after Remove: len %d", s.Len())
	}
	made[1].ended.Store(true)
	s.Remove(made[1])
}

func TestShutdownStopsThenAborts(t *testing.T) {
	var s Set[*fake]
	polite, _ := s.Add(0, func() *fake { return &fake{set: &s} })
	stubborn, _ := s.Add(0, func() *fake { return &fake{set: &s, stubborn: true} })
	listenerErr := errors.New("listener")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Shutdown(ctx, func() error { return listenerErr })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	if !polite.stopped.Load() || !polite.ended.Load() {
		t.Fatalf("polite: stopped %v", polite.stopped.Load())
	}
	if !stubborn.stopped.Load() || !stubborn.aborted.Load() || s.Len() != 0 {
		t.Fatalf("stubborn: stopped %v aborted %v, len %d", stubborn.stopped.Load(), stubborn.aborted.Load(), s.Len())
	}
	if !s.Stopping() {
		t.Fatal("not stopping after Shutdown")
	}
	if _, ok := s.Add(0, func() *fake { t.Fatal("newConn called after Shutdown"); return nil }); ok {
		t.Fatal("Add accepted after Shutdown")
	}
	// Without stubborn connections Shutdown returns the listener's error.
	var s2 Set[*fake]
	s2.Add(0, func() *fake { return &fake{set: &s2} })
	if err := s2.Shutdown(context.Background(), func() error { return listenerErr }); err != listenerErr {
		t.Fatalf("Shutdown = %v, want the listener's error", err)
	}
}
