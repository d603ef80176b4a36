package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestReconnectResendsSameRequest drops the connection when a request
// arrives (before any reply) and checks that the client reconnects, logs
// in again with the same client id (a new epoch) and resends the request
// with the same client id, request number and body, under the new
// session.
func TestReconnectResendsSameRequest(t *testing.T) {
	batch := mustBatch(t, []wire.Message{{Payload: []byte("once")}})
	sid, tid := wire.NumericID(1), wire.NumericID(2)
	for _, tc := range []struct {
		name string
		op   wire.Operation
		run  func(ctx context.Context, c *Client) error
	}{
		{"send messages", wire.OpSendMessages, func(ctx context.Context, c *Client) error {
			_, err := c.SendMessages(ctx, sid, tid, wire.PartitioningByID(1), []wire.Message{{Payload: []byte("once")}})
			return err
		}},
		{"send batch", wire.OpSendMessages, func(ctx context.Context, c *Client) error {
			_, err := c.SendBatch(ctx, sid, tid, wire.PartitioningByID(1), batch)
			return err
		}},
		{"create stream", wire.OpCreateStream, func(ctx context.Context, c *Client) error {
			_, err := c.CreateStream(ctx, "s")
			return ignoreDecode(err)
		}},
		{"store offset", wire.OpStoreConsumerOffset, func(ctx context.Context, c *Client) error {
			return c.StoreConsumerOffset(ctx, wire.SingleConsumer(sid), sid, tid, wire.SomePartition(0), 3)
		}},
		{"read", wire.OpNonReplicated, func(ctx context.Context, c *Client) error { return c.Ping(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dropped atomic.Bool
			s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
				if r.Hdr.Operation == tc.op && r.Command() != wire.CmdGetStreams && dropped.CompareAndSwap(false, true) {
					fc.drop()
					return true
				}
				return false
			})
			c := dialFake(t, s)
			if _, err := c.GetStreams(ctxTimeout(t)); err != nil { // a request before, to move the counter
				t.Fatal(err)
			}
			if err := tc.run(ctxTimeout(t), c); err != nil {
				t.Fatal(err)
			}
			var attempts, registers []fakeReq
			for _, r := range s.requests() {
				switch {
				case r.Hdr.Operation == wire.OpRegister:
					registers = append(registers, r)
				case r.Hdr.Operation == tc.op && r.Command() != wire.CmdGetStreams:
					attempts = append(attempts, r)
				}
			}
			if len(attempts) != 2 || attempts[0].Conn != 0 || attempts[1].Conn != 1 {
				t.Fatalf("%d attempts, want one per connection", len(attempts))
			}
			first, retry := attempts[0], attempts[1]
			if len(registers) != 2 || registers[1].Conn != 1 || registers[1].Hdr.Client != c.ID() || registers[1].Hdr.Request != 0 {
				t.Fatalf("re-login: %d registers", len(registers))
			}
			if retry.Hdr.Client != first.Hdr.Client || retry.Hdr.Request != first.Hdr.Request || !bytes.Equal(retry.Body, first.Body) ||
				retry.Hdr.RequestChecksum != first.Hdr.RequestChecksum {
				t.Fatalf("retry differs: client %v/%v request %d/%d", first.Hdr.Client, retry.Hdr.Client, first.Hdr.Request, retry.Hdr.Request)
			}
			if first.Hdr.Session != 1 || retry.Hdr.Session != 2 {
				t.Fatalf("sessions %d then %d, want 1 then 2", first.Hdr.Session, retry.Hdr.Session)
			}
			if c.Session() != 2 {
				t.Fatalf("client session %d", c.Session())
			}
		})
	}
}

// TestReconnectKeepsOrder: requests pipelined on a connection that breaks
// are resent on the next one in their original order.
func TestReconnectKeepsOrder(t *testing.T) {
	const n = 3
	var sends atomic.Int32
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if fc.idx == 0 && r.Hdr.Operation == wire.OpSendMessages {
			if sends.Add(1) == n {
				fc.drop()
			}
			return true // hold the first ones unanswered
		}
		return false
	})
	c := dialFake(t, s)
	ctx := ctxTimeout(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := c.SendMessages(ctx, wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(0), []wire.Message{{Payload: []byte{byte(i)}}})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var first, second []uint64
	for _, r := range s.requests() {
		if r.Hdr.Operation != wire.OpSendMessages {
			continue
		}
		if r.Conn == 0 {
			first = append(first, r.Hdr.Request)
		} else {
			second = append(second, r.Hdr.Request)
		}
	}
	if len(first) != n || len(second) != n {
		t.Fatalf("attempts %v then %v", first, second)
	}
	for i := range n {
		if first[i] != second[i] {
			t.Fatalf("resent order %v, first order %v", second, first)
		}
	}
}

// TestEviction: an eviction fails the request in flight with a
// *wire.EvictionError (matching the SDK mapping of its reason); the next
// call reconnects and logs in again under the same client id.
func TestEviction(t *testing.T) {
	for _, tc := range []struct {
		reason wire.EvictionReason
		want   error
	}{
		{wire.EvictStaleClient, wire.ErrStaleClient},
		{wire.EvictNoSession, wire.ErrUnauthenticated},
		{wire.EvictSessionTooLow, wire.ErrUnauthenticated},
	} {
		t.Run(tc.reason.String(), func(t *testing.T) {
			var evicted atomic.Bool
			s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
				if r.Command() == wire.CmdGetMe && evicted.CompareAndSwap(false, true) {
					fc.evict(r, tc.reason)
					return true
				}
				return false
			})
			c := dialFake(t, s)
			_, err := c.GetMe(ctxTimeout(t))
			ev, ok := errors.AsType[*wire.EvictionError](err)
			if !ok || ev.Reason != tc.reason || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want eviction %v", err, tc.reason)
			}
			if err := c.Ping(ctxTimeout(t)); err != nil {
				t.Fatalf("call after eviction: %v", err)
			}
			regs := 0
			for _, r := range s.requests() {
				if r.Hdr.Operation == wire.OpRegister {
					regs++
					if r.Hdr.Client != c.ID() {
						t.Fatal("re-login under another client id")
					}
				}
			}
			if regs != 2 {
				t.Fatalf("%d logins, want 2", regs)
			}
		})
	}
}

// TestLoginRefused: a refused login is a *wire.EvictionError at Dial, and
// a refusal during a reconnect fails the waiting calls without further
// attempts.
func TestLoginRefused(t *testing.T) {
	t.Run("dial", func(t *testing.T) {
		s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
			if r.Hdr.Operation == wire.OpRegister {
				fc.evict(r, wire.EvictInvalidCredentials)
				return true
			}
			return false
		})
		_, err := Dial(ctxTimeout(t), s.Addr(), WithCredentials("iggy", "wrong"))
		if ev, ok := errors.AsType[*wire.EvictionError](err); !ok || ev.Reason != wire.EvictInvalidCredentials || !errors.Is(err, wire.ErrInvalidCredentials) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("protocol", func(t *testing.T) {
		s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
			if r.Hdr.Operation == wire.OpRegister {
				fc.evict(r, wire.EvictIncompatibleProtocol)
				return true
			}
			return false
		})
		_, err := Dial(ctxTimeout(t), s.Addr(), WithToken("tok"))
		ev, ok := errors.AsType[*wire.EvictionError](err)
		if !ok || !errors.Is(err, wire.ErrIncompatibleProtocolVersion) || ev.ServerProtocolVersion != wire.ProtocolVersion {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("reconnect", func(t *testing.T) {
		var conns atomic.Int32
		s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
			switch {
			case r.Hdr.Operation == wire.OpRegister && fc.idx > 0:
				conns.Add(1)
				fc.evict(r, wire.EvictInvalidCredentials)
				return true
			case r.Command() == wire.CmdGetMe:
				fc.drop()
				return true
			}
			return false
		})
		c := dialFake(t, s)
		_, err := c.GetMe(ctxTimeout(t))
		if !errors.Is(err, wire.ErrInvalidCredentials) {
			t.Fatalf("err = %v", err)
		}
		if n := conns.Load(); n != 1 {
			t.Fatalf("%d login attempts after the refusal, want 1", n)
		}
	})
}

// TestReconnectDisabled: without reconnection a broken connection fails
// the request with a ConnError matching wire.ErrDisconnected.
func TestReconnectDisabled(t *testing.T) {
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Command() == wire.CmdGetMe {
			fc.drop()
			return true
		}
		return false
	})
	c := dialFake(t, s, WithReconnect(ReconnectPolicy{Disabled: true}))
	_, err := c.GetMe(ctxTimeout(t))
	if _, ok := errors.AsType[*ConnError](err); !ok || !errors.Is(err, wire.ErrDisconnected) {
		t.Fatalf("err = %v", err)
	}
	if err := c.Ping(ctxTimeout(t)); !errors.Is(err, wire.ErrDisconnected) {
		t.Fatalf("later call: %v", err)
	}
}

// TestReconnectGivesUp: when every reconnect attempt fails to dial, the
// waiting request fails after MaxAttempts with a ConnError.
func TestReconnectGivesUp(t *testing.T) {
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Command() == wire.CmdGetMe {
			fc.drop()
			return true
		}
		return false
	})
	var dials atomic.Int32
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) > 1 {
			return nil, errors.New("refused by test")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	c := dialFake(t, s, WithDialer(dialer), WithReconnect(ReconnectPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}))
	_, err := c.GetMe(ctxTimeout(t))
	if !errors.Is(err, wire.ErrDisconnected) {
		t.Fatalf("err = %v", err)
	}
	if n := dials.Load(); n != 1+3 {
		t.Fatalf("%d dials, want 4", n)
	}
}

// TestResponseTimeout: a request without a reply within the response
// timeout breaks the connection and is resent on a new one.
func TestResponseTimeout(t *testing.T) {
	var ignored atomic.Bool
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		return r.Command() == wire.CmdGetStats && ignored.CompareAndSwap(false, true)
	})
	c := dialFake(t, s, WithResponseTimeout(50*time.Millisecond))
	_, err := c.GetStats(ctxTimeout(t))
	if _, ok := errorsAsProtocol(err); !ok { // the fake's empty stats payload
		t.Fatalf("err = %v", err)
	}
	var nums []uint64
	for _, r := range s.requests() {
		if r.Command() == wire.CmdGetStats {
			nums = append(nums, r.Hdr.Request)
		}
	}
	if len(nums) != 2 || nums[0] != nums[1] {
		t.Fatalf("attempts %v", nums)
	}
}

// TestHeartbeat: an idle logged-in connection sends PINGs.
func TestHeartbeat(t *testing.T) {
	s := newFakeServer(t, nil)
	dialFake(t, s, WithHeartbeat(20*time.Millisecond))
	s.waitFor(func(rs []fakeReq) bool {
		for _, r := range rs {
			if r.Command() == wire.CmdPing {
				return true
			}
		}
		return false
	})
}
