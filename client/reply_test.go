package client

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestReplyDecoding covers the client decode order of framing.md: status
// denials, result-section rejections, reply operation rewrites, undeclared
// operations, request echo mismatches and empty SendMessages replies.
func TestReplyDecoding(t *testing.T) {
	sid, tid := wire.NumericID(1), wire.NumericID(2)
	topicReply := func() []byte {
		d := wire.TopicDetails{Topic: wire.Topic{ID: 3, Name: "t", PartitionsCount: 1, CompressionAlgorithm: wire.CompressionNone},
			Partitions: []wire.PartitionInfo{{ID: 0}}}
		return d.AppendTo(wire.AppendResultOK(nil))
	}
	for _, tc := range []struct {
		name    string
		answer  func(fc *fakeConn, r fakeReq)
		run     func(ctx context.Context, c *Client) error
		wantErr error // nil: success
		proto   bool  // want a *ProtocolError
	}{
		{
			name:    "status denial",
			answer:  func(fc *fakeConn, r fakeReq) { fc.reply(r, wire.ErrUnauthorized.Code, nil) },
			run:     func(ctx context.Context, c *Client) error { _, err := c.GetStats(ctx); return err },
			wantErr: wire.ErrUnauthorized,
		},
		{
			name: "result rejection",
			answer: func(fc *fakeConn, r fakeReq) {
				fc.reply(r, 0, wire.AppendResultError(nil, wire.ErrStreamNameAlreadyExists.Code))
			},
			run:     func(ctx context.Context, c *Client) error { _, err := c.CreateStream(ctx, "s"); return err },
			wantErr: wire.ErrStreamNameAlreadyExists,
		},
		{
			name:   "create topic reply rewritten to 64",
			answer: func(fc *fakeConn, r fakeReq) { fc.replyOp(r, wire.OpCreateTopicWithAssignments, 0, topicReply()) },
			run: func(ctx context.Context, c *Client) error {
				d, err := c.CreateTopic(ctx, sid, "t", 1)
				if err == nil && (d.ID != 3 || len(d.Partitions) != 1) {
					return errors.New("wrong topic details")
				}
				return err
			},
		},
		{
			name: "delete segments reply rewritten to 68",
			answer: func(fc *fakeConn, r fakeReq) {
				fc.replyOp(r, wire.OpTruncatePartition, 0, wire.AppendResultError(nil, wire.ErrPartitionNotFound.Code))
			},
			run:     func(ctx context.Context, c *Client) error { return c.DeleteSegments(ctx, sid, tid, 9, 1) },
			wantErr: wire.ErrPartitionNotFound,
		},
		{
			name:   "undeclared reply operation",
			answer: func(fc *fakeConn, r fakeReq) { fc.replyOp(r, wire.Operation(99), 0, nil) },
			run:    func(ctx context.Context, c *Client) error { return c.Ping(ctx) },
			proto:  true,
		},
		{
			name:   "empty send reply",
			answer: func(fc *fakeConn, r fakeReq) { fc.reply(r, 0, nil) },
			run: func(ctx context.Context, c *Client) error {
				_, err := c.SendMessages(ctx, sid, tid, wire.PartitioningByID(0), []wire.Message{{Payload: []byte("x")}})
				return err
			},
			proto: true,
		},
		{
			name:    "not found stream",
			answer:  func(fc *fakeConn, r fakeReq) { fc.reply(r, 0, nil) },
			run:     func(ctx context.Context, c *Client) error { _, err := c.GetStream(ctx, sid); return err },
			wantErr: wire.ErrStreamIDNotFound,
		},
		{
			name:   "not a group member",
			answer: func(fc *fakeConn, r fakeReq) { fc.reply(r, 0, nil) },
			run: func(ctx context.Context, c *Client) error {
				_, err := c.SyncConsumerGroup(ctx, sid, tid, sid)
				return err
			},
			wantErr: wire.ErrConsumerGroupMemberNotFound,
		},
		{
			name:   "no stored offset",
			answer: func(fc *fakeConn, r fakeReq) { fc.reply(r, 0, nil) },
			run: func(ctx context.Context, c *Client) error {
				off, err := c.GetConsumerOffset(ctx, wire.SingleConsumer(sid), sid, tid, wire.OptPartition{})
				if err == nil && off != nil {
					return errors.New("offset reported")
				}
				return err
			},
		},
		{
			name:   "undecodable payload",
			answer: func(fc *fakeConn, r fakeReq) { fc.reply(r, 0, []byte{1, 2, 3}) },
			run:    func(ctx context.Context, c *Client) error { _, err := c.GetMe(ctx); return err },
			proto:  true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
				if r.Hdr.Operation == wire.OpRegister {
					return false
				}
				tc.answer(fc, r)
				return true
			})
			c := dialFake(t, s)
			err := tc.run(ctxTimeout(t), c)
			switch {
			case tc.proto:
				if _, ok := errorsAsProtocol(err); !ok || !errors.Is(err, wire.ErrInvalidCommand) {
					t.Fatalf("err = %v, want a protocol error", err)
				}
			case tc.wantErr == nil:
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			default:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if _, ok := errors.AsType[*CommandError](err); !ok {
					t.Fatalf("err = %T, want a *CommandError", err)
				}
			}
		})
	}
}

// TestRequestEchoMismatch: a reply whose request number is not the one in
// flight breaks the connection with a protocol error.
func TestRequestEchoMismatch(t *testing.T) {
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Hdr.Operation == wire.OpRegister {
			return false
		}
		r.Hdr.Request += 100
		fc.reply(r, 0, nil)
		return true
	})
	c := dialFake(t, s)
	err := c.Ping(ctxTimeout(t))
	if _, ok := errorsAsProtocol(err); !ok {
		t.Fatalf("err = %v, want a protocol error", err)
	}
}

// TestTransientRetry: a transient rejection (status or result 57/58) is
// retried with the identical frame until it succeeds.
func TestTransientRetry(t *testing.T) {
	batch := mustBatch(t, []wire.Message{{Payload: []byte("p")}})
	for _, tc := range []struct {
		name   string
		answer func(fc *fakeConn, r fakeReq)
		run    func(ctx context.Context, c *Client) error
	}{
		{
			name: "result 57 on create stream",
			answer: func(fc *fakeConn, r fakeReq) {
				fc.reply(r, 0, wire.AppendResultError(nil, wire.ErrTransientNotCommitted.Code))
			},
			run: func(ctx context.Context, c *Client) error {
				_, err := c.CreateStream(ctx, "s")
				return ignoreDecode(err)
			},
		},
		{
			name:   "status 58 on send",
			answer: func(fc *fakeConn, r fakeReq) { fc.reply(r, wire.ErrTransientNotAccepted.Code, nil) },
			run: func(ctx context.Context, c *Client) error {
				_, err := c.SendMessages(ctx, wire.NumericID(1), wire.NumericID(1), wire.BalancedPartitioning(), []wire.Message{{Payload: []byte("p")}})
				return err
			},
		},
		{
			name:   "status 58 on send batch",
			answer: func(fc *fakeConn, r fakeReq) { fc.reply(r, wire.ErrTransientNotAccepted.Code, nil) },
			run: func(ctx context.Context, c *Client) error {
				_, err := c.SendBatch(ctx, wire.NumericID(1), wire.NumericID(1), wire.BalancedPartitioning(), batch)
				return err
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rejected atomic.Int32
			s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
				if r.Hdr.Operation != wire.OpRegister && rejected.Add(1) <= 2 {
					tc.answer(fc, r)
					return true
				}
				return false
			})
			c := dialFake(t, s)
			if err := tc.run(ctxTimeout(t), c); err != nil {
				t.Fatal(err)
			}
			reqs := s.requests()[1:] // after the Register
			if len(reqs) != 3 {
				t.Fatalf("%d attempts, want 3", len(reqs))
			}
			for _, r := range reqs[1:] {
				if !bytes.Equal(r.Frame, reqs[0].Frame) {
					t.Fatal("retried frame differs from the first attempt")
				}
			}
		})
	}
}

// TestTransientRetryExhausted: after MaxAttempts retries the transient
// error is returned.
func TestTransientRetryExhausted(t *testing.T) {
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Hdr.Operation == wire.OpRegister {
			return false
		}
		fc.reply(r, wire.ErrTransientNotAccepted.Code, nil)
		return true
	})
	c := dialFake(t, s, WithTransientRetry(RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}))
	if err := c.Ping(ctxTimeout(t)); !errors.Is(err, wire.ErrTransientNotAccepted) {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.requests()); n != 1+4 {
		t.Fatalf("%d frames, want register + 4 attempts", n)
	}
}

// TestConcurrentCalls: many goroutines share one connection; every call
// gets its own reply (pipelined, matched in order).
func TestConcurrentCalls(t *testing.T) {
	for _, lockstep := range []bool{false, true} {
		t.Run(map[bool]string{false: "pipelined", true: "lockstep"}[lockstep], func(t *testing.T) {
			s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
				if r.Command() == wire.CmdGetClient {
					// Echo the asked id so each caller can check it got its own reply.
					var g wire.GetClient
					g.Decode(r.Body)
					d := wire.ClientDetails{ClientID: g.ClientID, Address: "a", Transport: wire.TransportTCP}
					fc.reply(r, 0, d.AppendTo(nil))
					return true
				}
				return false
			})
			var opts []Option
			if lockstep {
				opts = append(opts, WithLockstep())
			}
			c := dialFake(t, s, opts...)
			ctx := ctxTimeout(t)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for g := range 16 {
				wg.Go(func() {
					for i := range 20 {
						id := uint32(g*1000 + i)
						d, err := c.GetClient(ctx, id)
						if err != nil {
							errs <- err
							return
						}
						if d.ClientID != id {
							errs <- errors.New("reply of another request")
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// TestContextCancel: a caller whose context ends gets the context error;
// the late reply is discarded and the connection stays usable.
func TestContextCancel(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Command() == wire.CmdGetStats {
			<-release
		}
		return false
	})
	c := dialFake(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		s.waitFor(func(rs []fakeReq) bool { return len(rs) == 2 })
		cancel()
	}()
	_, err := c.GetStats(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	once.Do(func() { close(release) })
	if err := c.Ping(ctxTimeout(t)); err != nil {
		t.Fatalf("ping after cancel: %v", err)
	}
	// A context that is already done sends nothing.
	done, cancel2 := context.WithCancel(t.Context())
	cancel2()
	if err := c.Ping(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

// TestClose: Close fails waiting calls with ErrClosed and later calls too.
func TestClose(t *testing.T) {
	block := make(chan struct{})
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		if r.Command() == wire.CmdPing {
			<-block
		}
		return false
	})
	defer close(block)
	c := dialFake(t, s)
	errc := make(chan error, 1)
	go func() { errc <- c.Ping(t.Context()) }()
	s.waitFor(func(rs []fakeReq) bool { return len(rs) == 2 })
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiting call: %v", err)
	}
	if err := c.Ping(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
