package tcp

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// legacyRequest builds a pre-0.11 request: [4+len(payload)][code][payload].
func legacyRequest(code wire.Command, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))
	b = binary.LittleEndian.AppendUint32(b, uint32(code))
	return append(b, payload...)
}

// legacyLogin is a pre-0.11 LOGIN_USER (38) request as the Java SDK 0.8.0
// sends it: [username Name][password u8-prefixed][version u32-prefixed]
// [context u32-prefixed].
func legacyLogin(user, password string) []byte {
	p := append([]byte{byte(len(user))}, user...)
	p = append(append(p, byte(len(password))), password...)
	for _, s := range []string{"0.8.0", "java-sdk/0.8.0"} {
		p = binary.LittleEndian.AppendUint32(p, uint32(len(s)))
		p = append(p, s...)
	}
	return legacyRequest(wire.CmdLoginUser, p)
}

// validHeader is a 0.11 request header with a body of size-256 bytes.
func validHeader(op wire.Operation, code wire.Command, size uint32) []byte {
	h := wire.RequestHeader{Prologue: wire.Prologue{Size: size}, Client: wire.Uint128{Lo: 7}, Operation: op, Code: code}
	return h.AppendTo(nil)
}

func TestLegacyFrame(t *testing.T) {
	const max = 1 << 20
	login := legacyLogin("iggy", "iggy")
	big := legacyRequest(wire.CmdSendMessages, bytes.Repeat([]byte{0xab}, 600))[:wire.HeaderSize]
	bigAsRequest := bytes.Clone(big)
	bigAsRequest[60] = byte(wire.KindRequest)
	binary.LittleEndian.PutUint32(bigAsRequest[48:], 300)
	for _, tc := range []struct {
		name string
		b    []byte
		code wire.Command
		ok   bool
	}{
		{"login", login, wire.CmdLoginUser, true},
		{"login with trailing bytes", append(bytes.Clone(login), 1, 2, 3), wire.CmdLoginUser, true},
		{"login incomplete", login[:len(login)-1], 0, false},
		{"prefix only", login[:8], 0, false},
		{"shorter than prefix", login[:7], 0, false},
		{"pat login", legacyRequest(wire.CmdLoginWithPersonalAccessToken, []byte{3, 'a', 'b', 'c'}), wire.CmdLoginWithPersonalAccessToken, true},
		{"ping", legacyRequest(wire.CmdPing, nil), wire.CmdPing, true},
		{"length below 4", []byte{3, 0, 0, 0, 1, 0, 0, 0}, 0, false},
		{"length above max", binary.LittleEndian.AppendUint32([]byte{1, 0, 0x10, 0}, 1), 0, false},
		{"unknown code", legacyRequest(7, nil), 0, false},
		{"full header, not a 0.11 request", big, wire.CmdSendMessages, true},
		{"full header that parses as a 0.11 request", bigAsRequest, 0, false},
		{"0.11 ping", validHeader(wire.OpNonReplicated, wire.CmdPing, wire.HeaderSize), 0, false},
		{"0.11 login header", validHeader(wire.OpRegister, 0, 300), 0, false},
	} {
		code, ok := legacyFrame(tc.b, max)
		if ok != tc.ok || ok && code != tc.code {
			t.Errorf("%s: legacyFrame = %v, %v; want %v, %v", tc.name, code, ok, tc.code, tc.ok)
		}
	}
	// No prefix of a 0.11 header is legacy: its first 16 bytes are zero.
	h := validHeader(wire.OpNonReplicated, wire.CmdGetStats, wire.HeaderSize)
	for n := range len(h) + 1 {
		if _, ok := legacyFrame(h[:n], max); ok {
			t.Fatalf("0.11 header prefix of %d bytes taken for legacy", n)
		}
	}
}

func TestLegacyAnswer(t *testing.T) {
	b := legacyAnswer()
	if st := binary.LittleEndian.Uint32(b); st != 14003 {
		t.Fatalf("status %d, want 14003", st)
	}
	if n := binary.LittleEndian.Uint32(b[4:]); int(n) != len(b)-8 || string(b[8:]) != legacyReason {
		t.Fatalf("length %d, payload %q", n, b[8:])
	}
}

// blockingReader yields r, then blocks (like a client waiting for its
// answer) until release is closed, then reports EOF.
type blockingReader struct {
	r       io.Reader
	release chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		<-b.release
	}
	return n, err
}

// runUntil runs c until it ends or the timeout passes.
func runUntil(t *testing.T, c *conn, timeout time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { c.run(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("connection still running after %v", timeout)
	}
}

// TestConnRefusesLegacy: a legacy login, whole or one byte per read, is
// answered at once (the client keeps the connection open and waits) with
// the legacy error and one warning, and the connection ends.
func TestConnRefusesLegacy(t *testing.T) {
	for _, split := range []bool{false, true} {
		s := newTestServer(t)
		logs := &testutil.SyncBuffer{}
		s.log = slog.New(slog.NewTextHandler(logs, nil))
		var r io.Reader = bytes.NewReader(legacyLogin("iggy", "iggy"))
		if split {
			r = iotest.OneByteReader(r)
		}
		release := make(chan struct{})
		fc := &fakeConn{r: &blockingReader{r: r, release: release}, out: &bytes.Buffer{}}
		c := s.track(fc)
		runUntil(t, c, 5*time.Second)
		close(release)
		if got := fc.out.Bytes(); !bytes.Equal(got, legacyAnswer()) {
			t.Fatalf("split %v: wrote %x, want the legacy answer", split, got)
		}
		if s.Connections() != 0 || s.sessions.Len() != 0 {
			t.Fatalf("split %v: connection not cleaned up", split)
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "legacy pre-0.11 framing") ||
			!strings.Contains(lines[0], "addr=127.0.0.1:1") || !strings.Contains(lines[0], "upgrade the SDK") {
			t.Fatalf("split %v: log %q, want one warning naming the address", split, logs.String())
		}
	}
}

// TestConnModernSplitFrames: 0.11 frames arriving one byte per read are
// served as usual, the first one included.
func TestConnModernSplitFrames(t *testing.T) {
	s := newTestServer(t)
	in := append(pingFrame(), pingFrame()...)
	fc := &fakeConn{r: iotest.OneByteReader(bytes.NewReader(in)), out: &bytes.Buffer{}}
	c := s.track(fc)
	runUntil(t, c, 5*time.Second)
	out := fc.out.Bytes()
	if len(out) != 2*wire.HeaderSize {
		t.Fatalf("wrote %d bytes, want two replies", len(out))
	}
	for i := range 2 {
		var r wire.ReplyHeader
		if err := r.Decode(out[i*wire.HeaderSize:]); err != nil || r.Status != 0 {
			t.Fatalf("reply %d: %+v %v", i, r, err)
		}
	}
}

// TestLegacyOnlyFirstFrame: a legacy-looking frame after a 0.11 frame is
// not answered in the legacy format (only the first frame is checked).
func TestLegacyOnlyFirstFrame(t *testing.T) {
	s := newTestServer(t)
	in := append(pingFrame(), legacyLogin("iggy", "iggy")...)
	fc := &fakeConn{r: bytes.NewReader(in), out: &bytes.Buffer{}}
	c := s.track(fc)
	runUntil(t, c, 5*time.Second)
	if out := fc.out.Bytes(); len(out) != wire.HeaderSize || bytes.Contains(out, []byte(legacyReason)) {
		t.Fatalf("wrote %d bytes, want one reply", len(out))
	}
}

// FuzzLegacyFrame: the detector never panics, only accepts a complete
// legacy frame when given less than a header, and never accepts a 0.11
// client header (zero checksum) or a full header that parses as a 0.11
// request.
func FuzzLegacyFrame(f *testing.F) {
	f.Add(legacyLogin("iggy", "iggy"))
	f.Add(legacyRequest(wire.CmdPing, nil))
	f.Add(validHeader(wire.OpNonReplicated, wire.CmdPing, wire.HeaderSize))
	f.Add(legacyRequest(wire.CmdSendMessages, make([]byte, 300)))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := data[:min(len(data), wire.HeaderSize)]
		const max = 1 << 20
		if _, ok := legacyFrame(b, max); ok && len(b) < wire.HeaderSize {
			if n := binary.LittleEndian.Uint32(b); uint64(n)+4 > uint64(len(b)) {
				t.Fatalf("incomplete legacy frame accepted: length %d, %d bytes", n, len(b))
			}
		}
		z := bytes.Clone(b)
		clear(z[:min(len(z), 16)])
		if _, ok := legacyFrame(z, max); ok {
			t.Fatalf("header with zero checksum accepted: %x", z)
		}
		if len(b) == wire.HeaderSize {
			r := bytes.Clone(b)
			r[60] = byte(wire.KindRequest)
			binary.LittleEndian.PutUint32(r[48:], wire.HeaderSize+uint32(r[49]))
			if _, ok := legacyFrame(r, max); ok {
				t.Fatalf("0.11 request header accepted: %x", r)
			}
		}
	})
}
