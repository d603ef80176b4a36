package itest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// legacyDeadline bounds the legacy answer and the close after it.
const legacyDeadline = time.Second

// legacyRequest builds a pre-0.11 request: [4+len(payload)][code][payload].
func legacyRequest(code wire.Command, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))
	b = binary.LittleEndian.AppendUint32(b, uint32(code))
	return append(b, payload...)
}

// legacyLoginFrame is the pre-0.11 LOGIN_USER (38) frame of the Java SDK
// 0.8.0 (commands.md §38, old layout).
func legacyLoginFrame(user, password string) []byte {
	p := append([]byte{byte(len(user))}, user...)
	p = append(append(p, byte(len(password))), password...)
	for _, s := range []string{"0.8.0", "java-sdk/0.8.0"} {
		p = binary.LittleEndian.AppendUint32(p, uint32(len(s)))
		p = append(p, s...)
	}
	return legacyRequest(wire.CmdLoginUser, p)
}

// expectLegacyRefusal reads the legacy answer [status 14003][length][reason]
// and then the close, both within legacyDeadline of start.
func expectLegacyRefusal(t *testing.T, nc net.Conn, start time.Time) {
	t.Helper()
	nc.SetReadDeadline(start.Add(legacyDeadline))
	var prefix [8]byte
	if _, err := io.ReadFull(nc, prefix[:]); err != nil {
		t.Fatalf("no legacy answer within %v: %v", legacyDeadline, err)
	}
	status, n := binary.LittleEndian.Uint32(prefix[:]), binary.LittleEndian.Uint32(prefix[4:])
	if status != wire.ErrIncompatibleProtocolVersion.Code || n > 1024 {
		t.Fatalf("legacy answer status %d length %d, want 14003 and a short reason", status, n)
	}
	reason := make([]byte, n)
	if _, err := io.ReadFull(nc, reason); err != nil {
		t.Fatalf("legacy answer reason: %v", err)
	}
	if !strings.Contains(string(reason), "0.11.0") || !strings.Contains(string(reason), "upgrade the SDK") {
		t.Fatalf("legacy reason %q", reason)
	}
	var rest [1]byte
	m, err := nc.Read(rest[:])
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection still open %v after the legacy login", legacyDeadline)
	}
	if m != 0 || err == nil {
		t.Fatalf("more bytes after the legacy answer: %d, %v", m, err)
	}
	if d := time.Since(start); d > legacyDeadline {
		t.Fatalf("refusal took %v", d)
	}
}

// TestLegacyClientRefused: a pre-0.11 client's first frame (password or PAT
// login, PING, sent whole or in pieces, plain TCP or TLS) gets the legacy
// error at once and the connection is closed; 0.11 clients are served as
// before, also while and after legacy clients are refused.
func TestLegacyClientRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{{"tcp", nil}, {"tls", []Option{WithTLS()}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, tc.opts...)
			modern := s.Dial(t)
			modern.LoginRoot()
			frames := map[string][]byte{
				"login":     legacyLoginFrame(RootUsername, RootPassword),
				"pat login": legacyRequest(wire.CmdLoginWithPersonalAccessToken, append([]byte{5}, "token"...)),
				"ping":      legacyRequest(wire.CmdPing, nil),
			}
			for name, frame := range frames {
				for _, split := range []int{0, 5, len(frame) - 1} {
					c := s.Dial(t)
					start := time.Now()
					var err error
					if split == 0 {
						err = c.Write(frame)
					} else if err = c.Write(frame[:split]); err == nil {
						time.Sleep(20 * time.Millisecond)
						err = c.Write(frame[split:])
					}
					if err != nil {
						t.Fatalf("%s: write: %v", name, err)
					}
					t.Logf("%s split at %d", name, split)
					expectLegacyRefusal(t, c.Conn, start)
				}
			}
			modern.Ping()
			fresh := s.Dial(t)
			fresh.LoginRoot()
			fresh.Ping()
			waitFor(t, "refused connections closed", func() bool { return s.Broker.Connections() == 2 })
		})
	}
}

// TestModernFirstFrameInPieces: a 0.11 login whose header arrives in small
// pieces (the first 8 bytes alone, then the rest of the header, then the
// body) is served, not taken for a legacy frame.
func TestModernFirstFrameInPieces(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	body := LoginBody(RootUsername, RootPassword)
	frame := EncodeRequest(c.Header(wire.OpRegister, 0), body)
	for _, cut := range [][2]int{{0, 8}, {8, 100}, {100, wire.HeaderSize}, {wire.HeaderSize, len(frame)}} {
		if err := c.Write(frame[cut[0]:cut[1]]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f := c.MustRecv()
	payload, err := wire.SplitResult(f.Body)
	var r wire.LoginRegisterReply
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || err != nil || r.Decode(payload) != nil || r.Session == 0 {
		t.Fatalf("login in pieces answered %v (%v)", f, err)
	}
	c.Session, c.Next = r.Session, 1
	c.Ping()
}
