package client_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

// Integration tests against the real broker (internal/itest) for what it
// serves today: PING, login by password and token, GET_ME, GET_CLIENT(S),
// LOGOUT, FLUSH_UNSAVED_BUFFER and evictions, over TCP and TLS.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialRoot(t *testing.T, s *itest.Server, opts ...client.Option) *client.Client {
	t.Helper()
	base := []client.Option{client.WithCredentials(itest.RootUsername, itest.RootPassword), client.WithTLS(s.ClientTLS)}
	c, err := client.Dial(testCtx(t), s.Addr, append(base, opts...)...)
	if err != nil {
		t.Fatalf("dial broker: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestBrokerSession(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[tlsOn], func(t *testing.T) {
			var opts []itest.Option
			if tlsOn {
				opts = append(opts, itest.WithTLS())
			}
			s := itest.Start(t, opts...)
			ctx := testCtx(t)
			c := dialRoot(t, s, client.WithSDKInfo("sdk-test", "1.2.3"))
			if c.Session() == 0 {
				t.Fatal("no session after login")
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			me, err := c.GetMe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if me.UserID != 0 || me.Transport != wire.TransportTCP || me.Address == "" {
				t.Fatalf("GET_ME %+v", me)
			}
			cs, err := c.GetClients(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, x := range cs {
				found = found || x.ClientID == me.ClientID
			}
			if !found {
				t.Fatalf("GET_CLIENTS %+v lacks %d", cs, me.ClientID)
			}
			one, err := c.GetClient(ctx, me.ClientID)
			if err != nil || one.ClientID != me.ClientID {
				t.Fatalf("GET_CLIENT %+v, %v", one, err)
			}
			if _, err := c.GetClient(ctx, me.ClientID+1000); !errors.Is(err, wire.ErrClientNotFound) {
				t.Fatalf("GET_CLIENT of nobody: %v", err)
			}
			if err := c.FlushUnsavedBuffer(ctx, wire.NumericID(1), wire.NumericID(1), 0, true); !errors.Is(err, wire.ErrFeatureUnavailable) {
				t.Fatalf("FLUSH: %v", err)
			}
			if err := c.Logout(ctx); err != nil {
				t.Fatal(err)
			}
			if c.Session() != 0 {
				t.Fatal("session kept after logout")
			}
			if _, err := c.GetMe(ctx); !errors.Is(err, wire.ErrUnauthenticated) {
				t.Fatalf("GET_ME after logout: %v", err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("PING after logout: %v", err)
			}
			if _, err := c.Login(ctx, itest.RootUsername, itest.RootPassword); err != nil {
				t.Fatalf("login again: %v", err)
			}
			if _, err := c.GetMe(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBrokerLoginWithToken(t *testing.T) {
	s := itest.Start(t)
	root := dialRoot(t, s)
	tok, err := root.CreatePersonalAccessToken(testCtx(t), "ci", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(testCtx(t), s.Addr, client.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.GetMe(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// An unknown token is refused with eviction 10.
	_, err = client.Dial(testCtx(t), s.Addr, client.WithToken("not-a-token"))
	if ev, ok := errors.AsType[*wire.EvictionError](err); !ok || ev.Reason != wire.EvictInvalidToken || !errors.Is(err, wire.ErrInvalidPersonalAccessToken) {
		t.Fatalf("bad token: %v", err)
	}
	// Login on an anonymous connection.
	a, err := client.Dial(testCtx(t), s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.LoginWithToken(testCtx(t), tok); err != nil {
		t.Fatal(err)
	}
}

func TestBrokerEvictions(t *testing.T) {
	s := itest.Start(t)
	ctx := testCtx(t)
	_, err := client.Dial(ctx, s.Addr, client.WithCredentials(itest.RootUsername, "wrong"))
	if ev, ok := errors.AsType[*wire.EvictionError](err); !ok || ev.Reason != wire.EvictInvalidCredentials || !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("bad password: %v", err)
	}
	// A read before login is refused (status 40), not evicted.
	anon, err := client.Dial(ctx, s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if err := anon.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := anon.GetMe(ctx); !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("read before login: %v", err)
	}
	// A second client logging in under the same client id fences the
	// first: its next metadata request is evicted with SessionTooLow.
	a := dialRoot(t, s)
	b := dialRoot(t, s, client.WithClientID(a.ID()))
	if b.Session() <= a.Session() {
		t.Fatalf("epochs %d then %d", a.Session(), b.Session())
	}
	_, err = a.CreateStream(ctx, "s")
	if ev, ok := errors.AsType[*wire.EvictionError](err); !ok || ev.Reason != wire.EvictSessionTooLow || !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("zombie request: %v", err)
	}
	// The evicted client reconnects and logs in again for its next call.
	if _, err := a.GetMe(ctx); err != nil {
		t.Fatalf("call after eviction: %v", err)
	}
	if a.Session() <= b.Session() {
		t.Fatalf("re-login epoch %d not above %d", a.Session(), b.Session())
	}
}

// TestBrokerReconnect breaks the client's socket under it: the next call
// reconnects and logs in again with the same client id and a higher epoch.
func TestBrokerReconnect(t *testing.T) {
	s := itest.Start(t)
	var mu sync.Mutex
	var conns []net.Conn
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
		return nc, err
	}
	c := dialRoot(t, s, client.WithDialer(dialer))
	ctx := testCtx(t)
	before := c.Session()
	if _, err := c.GetMe(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	conns[0].Close()
	mu.Unlock()
	me, err := c.GetMe(ctx)
	if err != nil {
		t.Fatalf("GET_ME across a reconnect: %v", err)
	}
	if me.UserID != 0 || c.Session() <= before {
		t.Fatalf("session %d after %d", c.Session(), before)
	}
	mu.Lock()
	n := len(conns)
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d connections", n)
	}
}

// TestBrokerConcurrent: many goroutines share one client.
func TestBrokerConcurrent(t *testing.T) {
	s := itest.Start(t)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := c.GetMe(ctx); err != nil {
					t.Error(err)
					return
				}
				if err := c.Ping(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
