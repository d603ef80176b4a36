package replication

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	kindEcho  uint8 = 1
	kindBlock uint8 = 2
)

// echo answers "<from>:<payload>", fails on "fail", refuses on "refuse".
func echo(ctx context.Context, from NodeID, p []byte) ([]byte, error) {
	switch string(p) {
	case "fail":
		return nil, errors.New("handler says no")
	case "refuse":
		return nil, fmt.Errorf("%w: not mine", ErrCallRefused)
	}
	return append(fmt.Appendf(nil, "%d:", from), p...), nil
}

func TestCallRoundTrip(t *testing.T) {
	c := newTCPCluster(t, 3, nil)
	for _, n := range c.nodes {
		n.h.HandleCall(kindEcho, echo)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Both directions of a connection (the lower id dials), and many
	// calls at once on one pair.
	var wg sync.WaitGroup
	errs := make(chan error, 300)
	for i := range 300 {
		from, to := NodeID(i%3), NodeID((i+1+i/3%2)%3)
		wg.Go(func() {
			p := fmt.Appendf(nil, "req-%d", i)
			got, err := c.nodes[from].h.Call(ctx, to, kindEcho, p)
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("%d:req-%d", from, i); string(got) != want {
				errs <- fmt.Errorf("call %d %d->%d: got %q, want %q", i, from, to, got, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	h0 := c.nodes[0].h
	_, err := h0.Call(ctx, 1, kindEcho, []byte("fail"))
	var re *RemoteError
	if !errors.As(err, &re) || re.Peer != 1 || !strings.Contains(re.Msg, "handler says no") || CallNotRun(err) {
		t.Fatalf("a handler error travels back as a RemoteError: %v", err)
	}
	if _, err = h0.Call(ctx, 1, kindEcho, []byte("refuse")); !errors.Is(err, ErrCallRefused) || !CallNotRun(err) || !strings.Contains(err.Error(), "not mine") {
		t.Fatalf("a refusal of the handler proves it did not run: %v", err)
	}
	if _, err = h0.Call(ctx, 2, 99, nil); !errors.Is(err, ErrCallRefused) || !strings.Contains(err.Error(), "no handler") {
		t.Fatalf("a kind without a handler is refused: %v", err)
	}
	// A call to itself runs the handler here.
	if got, err := h0.Call(ctx, 0, kindEcho, []byte("self")); err != nil || string(got) != "0:self" {
		t.Fatalf("self call: %q %v", got, err)
	}
	// Several MiB each way.
	big := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	got, err := h0.Call(ctx, 2, kindEcho, big)
	if err != nil || !bytes.Equal(got[2:], big) {
		t.Fatalf("large call: %d bytes, %v", len(got), err)
	}
	if s := h0.Stats(); s.CallsSent < 100 || s.CallsFailed != 3 {
		t.Fatalf("stats: %+v", s)
	}
}

// TestCallHandlerUsesTheHost: a handler runs off the host's loop, so it
// may call the host (here AddGroup, which runs on the loop).
func TestCallHandlerUsesTheHost(t *testing.T) {
	c := newTCPCluster(t, 2, nil)
	n1 := c.nodes[1]
	n1.h.HandleCall(kindEcho, func(ctx context.Context, _ NodeID, p []byte) ([]byte, error) {
		err := n1.h.AddGroup(ctx, 7, GroupOptions{Voters: []NodeID{1}, Machine: n1.sm.machine(7)})
		return p, err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.nodes[0].h.Call(ctx, 1, kindEcho, []byte("x")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the group added by the handler", func() bool { _, ok := n1.h.Status(7); return ok })
}

func TestCallTooLarge(t *testing.T) {
	c := newTCPCluster(t, 2, func(cfg *Config) { cfg.MaxCallBytes = 1 << 10 })
	for _, n := range c.nodes {
		n.h.HandleCall(kindEcho, echo)
	}
	ctx := context.Background()
	if _, err := c.nodes[0].h.Call(ctx, 1, kindEcho, make([]byte, 2<<10)); !errors.Is(err, ErrCallTooLarge) || !CallNotRun(err) {
		t.Fatalf("oversized request: %v", err)
	}
	// A reply over the limit is an error of the callee.
	if _, err := c.nodes[0].h.Call(ctx, 1, kindEcho, make([]byte, 1<<10-2)); err == nil || !strings.Contains(err.Error(), "frame limit") {
		t.Fatalf("oversized reply: %v", err)
	}
}

func TestCallUnreachableFailsFast(t *testing.T) {
	c := newTCPCluster(t, 2, nil)
	h0 := c.nodes[0].h
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := h0.Call(ctx, 9, kindEcho, nil); !errors.Is(err, ErrCallUnreachable) || !CallNotRun(err) {
		t.Fatalf("unknown replica: %v", err)
	}
	c.stop(1)
	eventually(t, 5*time.Second, "the connection to drop", func() bool { return !c.nodes[0].tr.Connected(1) })
	// A call made while the transport is still announcing the lost
	// connection may fail as lost instead; the next ones find no
	// connection.
	time.Sleep(50 * time.Millisecond)
	if _, err := h0.Call(ctx, 1, kindEcho, nil); !errors.Is(err, ErrCallUnreachable) {
		t.Fatalf("stopped replica: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("unreachable calls must fail at once, took %s", d)
	}
}

// TestCallContextEnds: the caller's context bounds the call, and its
// deadline bounds the handler on the peer.
func TestCallContextEnds(t *testing.T) {
	c := newTCPCluster(t, 2, nil)
	ended := make(chan time.Duration, 1)
	c.nodes[1].h.HandleCall(kindBlock, func(ctx context.Context, _ NodeID, _ []byte) ([]byte, error) {
		start := time.Now()
		<-ctx.Done()
		ended <- time.Since(start)
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.nodes[0].h.Call(ctx, 1, kindBlock, nil)
	// The handler's deadline is the caller's: either side may see it
	// first.
	var re *RemoteError
	if !(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &re) && strings.Contains(re.Msg, "deadline")) || CallNotRun(err) {
		t.Fatalf("want the deadline: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the call outlived its context by far: %s", d)
	}
	select {
	case d := <-ended:
		if d > 2*time.Second {
			t.Fatalf("the handler's context ended after %s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context did not end with the caller's deadline")
	}

	// Cancellation without a deadline.
	cctx, ccancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.nodes[0].h.Call(cctx, 1, kindBlock, nil); done <- err }()
	time.Sleep(50 * time.Millisecond)
	ccancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want cancellation: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled call did not return")
	}
}

// TestCallPeerRestart: a peer that goes away while a call waits fails the
// call (ErrCallLost, it may have run); once it is back, calls work again.
func TestCallPeerRestart(t *testing.T) {
	c := newTCPCluster(t, 2, nil)
	started := make(chan struct{}, 1)
	c.nodes[1].h.HandleCall(kindBlock, func(ctx context.Context, _ NodeID, _ []byte) ([]byte, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	done := make(chan error, 1)
	go func() {
		_, err := c.nodes[0].h.Call(context.Background(), 1, kindBlock, nil)
		done <- err
	}()
	<-started
	c.stop(1)
	select {
	case err := <-done:
		if !errors.Is(err, ErrCallLost) || CallNotRun(err) {
			t.Fatalf("want ErrCallLost: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call to a replica that went away hangs")
	}
	n1 := c.restart(1)
	n1.h.HandleCall(kindEcho, echo)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if got, err := c.nodes[0].h.Call(ctx, 1, kindEcho, []byte("again")); err != nil || string(got) != "0:again" {
		t.Fatalf("after the restart: %q %v", got, err)
	}
}

// TestCallHandlersBounded: at most CallHandlersPerPeer handlers run for
// one caller, CallBacklogPerPeer more wait, the rest are refused at once.
func TestCallHandlersBounded(t *testing.T) {
	c := newTCPCluster(t, 2, func(cfg *Config) { cfg.CallHandlersPerPeer, cfg.CallBacklogPerPeer = 2, 1 })
	release := make(chan struct{})
	var running, peak atomic.Int32
	c.nodes[1].h.HandleCall(kindBlock, func(ctx context.Context, _ NodeID, p []byte) ([]byte, error) {
		n := running.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		defer running.Add(-1)
		select {
		case <-release:
			return p, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h0 := c.nodes[0].h
	results := make(chan error, 3)
	for i := range 3 {
		go func() {
			_, err := h0.Call(ctx, 1, kindBlock, []byte{byte(i)})
			results <- err
		}()
	}
	eventually(t, 5*time.Second, "two handlers running", func() bool { return running.Load() == 2 })
	eventually(t, 5*time.Second, "the third admitted", func() bool { return admitted(c.nodes[1].h, 0) == 3 })
	if _, err := h0.Call(ctx, 1, kindBlock, nil); !errors.Is(err, ErrCallRefused) || !strings.Contains(err.Error(), "too many") {
		t.Fatalf("a fourth call must be refused: %v", err)
	}
	close(release)
	for range 3 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("%d handlers ran at once, the bound is 2", p)
	}
	if s := c.nodes[1].h.Stats(); s.CallsRefused != 1 || s.CallsServed != 3 {
		t.Fatalf("stats: %+v", s)
	}
}

// admitted is the number of calls of replica from running or waiting on h.
func admitted(h *Host, from NodeID) int64 {
	h.calls.mu.Lock()
	defer h.calls.mu.Unlock()
	if p := h.calls.peers[from]; p != nil {
		return p.admitted.Load()
	}
	return 0
}
