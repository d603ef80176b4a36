package itest

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// shortTimeouts makes the frame read and write deadlines small so tests
// that trip them finish quickly.
func shortTimeouts(c *config.Config) {
	c.TCP.FrameReadTimeout = config.Duration(200 * time.Millisecond)
	c.TCP.WriteTimeout = config.Duration(200 * time.Millisecond)
	c.MessageBus.MaxMessageSize = 64 << 10
}

// stillServing checks that a fresh client can log in and PING, and that
// the connection the test abused did not leave a session behind.
func stillServing(t *testing.T, s *Server) {
	t.Helper()
	c := s.Dial(t)
	c.LoginRoot()
	c.Ping()
}

// rawHeader returns an encoded request header with the given size.
func rawHeader(h wire.RequestHeader, size uint32) []byte {
	h.Size = size
	return h.AppendTo(nil)
}

func TestFramingErrors(t *testing.T) {
	s := Start(t, WithConfig(shortTimeouts))
	client := NewClientID()
	ping := wire.RequestHeader{Client: client, Operation: wire.OpNonReplicated, Code: wire.CmdPing}
	for _, tc := range []struct {
		name  string
		write func(c *Client) error
		// evict is the eviction expected before the close (0: none).
		evict wire.EvictionReason
	}{
		{name: "truncated header", write: func(c *Client) error { return c.Write(rawHeader(ping, 256)[:100]) }},
		{name: "size below header", write: func(c *Client) error { return c.Write(rawHeader(ping, 100)) }, evict: wire.EvictInvalidRequestBodySize},
		{name: "size zero", write: func(c *Client) error { return c.Write(rawHeader(ping, 0)) }, evict: wire.EvictInvalidRequestBodySize},
		{name: "size above limit", write: func(c *Client) error { return c.Write(rawHeader(ping, 64<<10+1)) }, evict: wire.EvictInvalidRequestBodySize},
		{name: "size max u32", write: func(c *Client) error { return c.Write(rawHeader(ping, ^uint32(0))) }, evict: wire.EvictInvalidRequestBodySize},
		{name: "body shorter than size", write: func(c *Client) error {
			return c.Write(append(rawHeader(ping, 300), make([]byte, 10)...))
		}, evict: wire.EvictInvalidRequestBodySize},
		{name: "garbage bytes", write: func(c *Client) error {
			b := make([]byte, 1024)
			_, _ = rand.Read(b)
			b[60] = 0xEE // not a Request
			return c.Write(b)
		}},
		{name: "reply frame from a client", write: func(c *Client) error {
			b := rawHeader(ping, 256)
			b[60] = byte(wire.KindReply)
			return c.Write(b)
		}},
		{name: "consensus prepare frame", write: func(c *Client) error {
			b := rawHeader(ping, 256)
			b[60] = 6
			return c.Write(b)
		}},
		{name: "size below header without client", write: func(c *Client) error {
			h := ping
			h.Client = wire.Uint128{}
			return c.Write(rawHeader(h, 10))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := s.Dial(t)
			c.Ping() // a healthy exchange first
			if err := tc.write(c); err != nil {
				t.Fatal(err)
			}
			frames := c.ExpectClosed()
			switch {
			case tc.evict == 0 && len(frames) != 0:
				t.Fatalf("want the connection closed without an answer, got %v", frames)
			case tc.evict != 0:
				if len(frames) != 1 {
					t.Fatalf("want one eviction before the close, got %v", frames)
				}
				ExpectEviction(t, frames[0], tc.evict)
				if frames[0].Eviction.Client != client {
					t.Fatalf("eviction for client %v", frames[0].Eviction.Client)
				}
			}
			stillServing(t, s)
		})
	}
	onlyRuntimeWritten(t, s)
}

// onlyRuntimeWritten checks that the data directory holds nothing but the
// runtime and metadata directories the broker writes at start.
func onlyRuntimeWritten(t *testing.T, s *Server) {
	t.Helper()
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "runtime" && e.Name() != "metadata" && e.Name() != "cert.pem" && e.Name() != "key.pem" {
			t.Errorf("unexpected file in the data directory: %s", e.Name())
		}
	}
}

func TestLargeFrames(t *testing.T) {
	s := Start(t, WithConfig(func(c *config.Config) { c.MessageBus.MaxMessageSize = 8 << 20 }))
	c := s.Dial(t)
	c.LoginRoot()
	// A 3 MiB body is read in chunks, then ignored by PING (a request
	// without fields; the reference decodes a prefix).
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	ExpectStatus(t, c.Call(wire.CmdPing, big), 0)
	// A frame of exactly the limit is read too; one byte more is evicted.
	ExpectStatus(t, c.Call(wire.CmdPing, make([]byte, 8<<20-wire.HeaderSize)), 0)
	c.Ping()
	h := c.Header(wire.OpNonReplicated, wire.CmdPing)
	if err := c.Write(rawHeader(h, 8<<20+1)); err != nil {
		t.Fatal(err)
	}
	if frames := c.ExpectClosed(); len(frames) != 1 || frames[0].Eviction.Reason != wire.EvictInvalidRequestBodySize {
		t.Fatalf("oversized frame: %v", frames)
	}
}

func TestHeaderRuleViolations(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	r := c.LoginRoot()
	for _, tc := range []struct {
		name string
		h    wire.RequestHeader
		body []byte
	}{
		{"client id zero", wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdPing}, nil},
		{"register with session", wire.RequestHeader{Client: c.ID, Operation: wire.OpRegister, Session: 1}, LoginBody(RootUsername, RootPassword)},
		{"register with request", wire.RequestHeader{Client: c.ID, Operation: wire.OpRegister, Request: 1}, LoginBody(RootUsername, RootPassword)},
		{"logout with request zero", wire.RequestHeader{Client: c.ID, Operation: wire.OpLogout, Session: r.Session}, nil},
		{"logout with session zero", wire.RequestHeader{Client: c.ID, Operation: wire.OpLogout, Request: 5}, nil},
		{"metadata with request zero", wire.RequestHeader{Client: c.ID, Operation: wire.OpCreateStream, Session: r.Session}, nil},
		{"partition with session zero", wire.RequestHeader{Client: c.ID, Operation: wire.OpSendMessages, Request: 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := c.Do(tc.h, tc.body)
			ExpectStatus(t, f, wire.ErrInvalidCommand.Code)
			if f.Reply.Operation != tc.h.Operation || f.Reply.Request != tc.h.Request || f.Reply.Client != tc.h.Client {
				t.Fatalf("echo mismatch: %+v", f.Reply)
			}
			c.Ping() // same connection still usable, session intact
		})
	}
	if got := s.Broker.Sessions().Table().Len(); got != 1 {
		t.Fatalf("client table has %d entries, want 1", got)
	}
}

func TestRefusedOperations(t *testing.T) {
	s := Start(t)
	var ops []wire.Operation
	for v := 0; v < 256; v++ {
		if op := wire.Operation(v); !op.ClientAllowed() {
			ops = append(ops, op)
		}
	}
	if len(ops) != 256-28 {
		t.Fatalf("%d refused operations, want %d", len(ops), 256-28)
	}
	for _, bound := range []bool{false, true} {
		c := s.Dial(t)
		if bound {
			c.LoginRoot()
		}
		for _, op := range ops {
			h := wire.RequestHeader{Client: c.ID, Operation: op, Session: c.Session, Request: 1}
			f := c.Do(h, nil)
			ExpectEviction(t, f, wire.EvictInvalidRequestOperation)
			if bound {
				// The eviction ended the session; log in again for the next case.
				ExpectStatus(t, c.Call(wire.CmdGetMe, nil), wire.ErrUnauthenticated.Code)
				c.LoginRoot()
			}
		}
		c.Ping()
	}
	stillServing(t, s)
}

func TestSessionGate(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	// Reads other than PING before login: status 40, connection kept.
	for _, code := range []wire.Command{wire.CmdGetMe, wire.CmdGetClients, wire.CmdGetStats, wire.CmdGetClusterMetadata, wire.CmdGetStreams, 9999} {
		ExpectStatus(t, c.Call(code, nil), wire.ErrUnauthenticated.Code)
	}
	// Replicated operations before login: eviction 1.
	for _, op := range []wire.Operation{wire.OpCreateStream, wire.OpDeleteSegments, wire.OpSendMessages, wire.OpStoreConsumerOffset} {
		h := wire.RequestHeader{Client: c.ID, Operation: op, Session: 1, Request: 1}
		ExpectEviction(t, c.Do(h, nil), wire.EvictNoSession)
	}
	// Logout before login: plain success.
	f := c.Do(wire.RequestHeader{Client: c.ID, Operation: wire.OpLogout, Session: 1, Request: 1}, nil)
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || len(f.Body) != 0 {
		t.Fatalf("unbound logout answered %v", f)
	}
	// Legacy logins, unbound and bound: eviction 15.
	for _, code := range []wire.Command{wire.CmdLoginUser, wire.CmdLoginWithPersonalAccessToken} {
		ExpectEviction(t, c.Call(code, LoginBody(RootUsername, RootPassword)), wire.EvictMalformedLogin)
		c.LoginRoot()
		ExpectEviction(t, c.Call(code, nil), wire.EvictMalformedLogin)
		ExpectStatus(t, c.Call(wire.CmdGetMe, nil), wire.ErrUnauthenticated.Code)
	}
	c.LoginRoot()
	for _, tc := range []struct {
		name string
		code wire.Command
		want uint32
	}{
		{"unknown code", 9999, wire.ErrInvalidCommand.Code},
		{"unknown low code", 2, wire.ErrInvalidCommand.Code},
		{"replicated code as non-replicated", wire.CmdCreateStream, wire.ErrFeatureUnavailable.Code},
		{"send messages as non-replicated", wire.CmdSendMessages, wire.ErrFeatureUnavailable.Code},
		{"login register as non-replicated", wire.CmdLoginRegister, wire.ErrFeatureUnavailable.Code},
		{"flush unsaved buffer", wire.CmdFlushUnsavedBuffer, wire.ErrFeatureUnavailable.Code},
	} {
		t.Run(tc.name, func(t *testing.T) { ExpectStatus(t, c.Call(tc.code, nil), tc.want) })
	}
	// Partition operations with an undecodable (empty) body: status 3,
	// echoing the request's operation.
	for _, op := range []wire.Operation{wire.OpSendMessages, wire.OpStoreConsumerOffset, wire.OpDeleteConsumerOffset} {
		f := c.Do(c.Header(op, 0), nil)
		ExpectStatus(t, f, wire.ErrInvalidCommand.Code)
		if f.Reply.Operation != op {
			t.Fatalf("denial of %v carries operation %v", op, f.Reply.Operation)
		}
	}
	c.Ping()
}

func TestRequestChecksum(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	body := LoginBody(RootUsername, RootPassword)
	h := c.Header(wire.OpRegister, 0)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body) + 1}
	ExpectStatus(t, c.Do(h, body), wire.ErrInvalidFormat.Code)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body), Hi: 1}
	ExpectStatus(t, c.Do(h, body), wire.ErrInvalidFormat.Code)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body)}
	f := c.Do(h, body)
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || f.Reply.RequestChecksum != h.RequestChecksum {
		t.Fatalf("stamped login answered %v (checksum echo %v)", f, f.Reply.RequestChecksum)
	}
}

func TestLoginFailures(t *testing.T) {
	s := Start(t)
	meta := s.Broker.Metadata()
	sleeper, err := meta.CreateUser("sleeper", "sleeper-pw", wire.UserActive, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The token is made while the user is active; then the user goes inactive.
	tokSleeper, err := meta.CreatePAT(sleeper, "z", 0)
	if err != nil {
		t.Fatal(err)
	}
	root := s.Dial(t)
	root.LoginRoot()
	upd := wire.UpdateUser{UserID: wire.NumericID(sleeper), Status: wire.UserInactive}
	ExpectOK(t, root.Command(wire.OpUpdateUser, &upd))
	// Expires one microsecond after creation: expired by the time it is used.
	tokExpired, err := meta.CreatePAT(uint32(auth.RootUserID), "old", 1)
	if err != nil {
		t.Fatal(err)
	}
	tokGood, err := meta.CreatePAT(uint32(auth.RootUserID), "good", 0)
	if err != nil {
		t.Fatal(err)
	}

	withVersion := func(v uint32, body []byte) []byte {
		b := append([]byte(nil), body...)
		binary.LittleEndian.PutUint32(b, v)
		return b
	}
	rootBody := LoginBody(RootUsername, RootPassword)
	for _, tc := range []struct {
		name string
		body []byte
		want wire.EvictionReason
	}{
		{"wrong password", LoginBody(RootUsername, "not-the-password"), wire.EvictInvalidCredentials},
		{"unknown user", LoginBody("nobody", "whatever-pw"), wire.EvictInvalidCredentials},
		{"username too short", LoginBody("ig", "whatever-pw"), wire.EvictInvalidCredentials},
		{"password too long", LoginBody(RootUsername, strings.Repeat("x", 101)), wire.EvictInvalidCredentials},
		{"inactive user with password", LoginBody("sleeper", "sleeper-pw"), wire.EvictInvalidCredentials},
		{"inactive user with token", PATBody(tokSleeper), wire.EvictUserInactive},
		{"unknown token", PATBody("definitely-not-a-token-definitely-not-a-token-definitely-not-a-tok"), wire.EvictInvalidToken},
		{"expired token", PATBody(tokExpired), wire.EvictInvalidToken},
		{"protocol 0.10.0", withVersion(wire.PackVersion(0, 10, 0), rootBody), wire.EvictIncompatibleProtocol},
		{"protocol 0.12.0", withVersion(wire.PackVersion(0, 12, 0), rootBody), wire.EvictIncompatibleProtocol},
		{"protocol 1.11.0", withVersion(wire.PackVersion(1, 11, 0), rootBody), wire.EvictIncompatibleProtocol},
		{"protocol high bits", withVersion(1<<31|wire.ProtocolVersion, rootBody), wire.EvictIncompatibleProtocol},
		{"empty body", nil, wire.EvictMalformedLogin},
		{"version only", rootBody[:4], wire.EvictMalformedLogin},
		{"empty sdk name", append([]byte{0, 0x2c, 0, 0, 0}, rootBody[5:]...), wire.EvictMalformedLogin},
		{"prefix then garbage", append(append([]byte(nil), rootBody[:4+1+len(Version.SDKName)+1+len(Version.SDKVersion)]...), 0xff, 0xff), wire.EvictMalformedLogin},
		{"prefix only", rootBody[:4+1+len(Version.SDKName)+1+len(Version.SDKVersion)], wire.EvictMalformedLogin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := s.Dial(t)
			_, f := c.LoginWith(tc.body)
			ExpectEviction(t, f, tc.want)
			if _, ok := s.Broker.Sessions().Table().Epoch(c.ID); ok {
				t.Fatal("a refused login registered a session")
			}
			if f.Eviction.Client != c.ID {
				t.Fatalf("eviction names client %v, want %v", f.Eviction.Client, c.ID)
			}
			if tc.want == wire.EvictIncompatibleProtocol {
				if f.Eviction.ServerProtocolVersion != wire.ProtocolVersion || f.Eviction.ServerProtocolVersionMin != wire.ProtocolVersionMin {
					t.Fatalf("window %d..%d", f.Eviction.ServerProtocolVersionMin, f.Eviction.ServerProtocolVersion)
				}
			}
			// The connection stays open and unauthenticated; a good login works on it.
			ExpectStatus(t, c.Call(wire.CmdGetMe, nil), wire.ErrUnauthenticated.Code)
			c.LoginRoot()
		})
	}
	// A patch release of the same minor is accepted.
	c := s.Dial(t)
	if r, f := c.LoginWith(withVersion(wire.PackVersion(0, 11, 7), rootBody)); r.Session == 0 {
		t.Fatalf("0.11.7 refused: %v", f)
	}
	if r, f := s.Dial(t).LoginWith(PATBody(tokGood)); r.Session == 0 {
		t.Fatalf("good token refused: %v", f)
	}
}
