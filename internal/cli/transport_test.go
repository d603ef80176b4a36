package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/itest"
)

// TestTransportFlag: the CLI over QUIC, WebSocket and WSS, by --transport
// and by connection string.
func TestTransportFlag(t *testing.T) {
	for _, tc := range []struct {
		name, transport string
		opts            []itest.Option
		scheme, query   string
	}{
		{"quic", "quic", []itest.Option{itest.WithTransport(itest.TransportQUIC)}, "iggy+quic", ""},
		{"ws", "ws", []itest.Option{itest.WithTransport(itest.TransportWS)}, "iggy+ws", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCLI(t, tc.opts...)
			e.environ[0] = EnvAddr + "=" + e.srv.TransportAddr // newCLI put the TCP address first
			e.ok("stream", "create", "orders", "--transport", tc.transport)
			e.ok("topic", "create", "orders", "events", "1", "--transport", tc.transport)
			e.ok("send", "orders", "events", "--partition", "0", "m1", "m2", "--transport", tc.transport)
			cs := tc.scheme + "://iggy:iggy@" + e.srv.TransportAddr + tc.query
			out := e.ok("stream", "list", "--addr", cs)
			if !strings.Contains(out, "orders") {
				t.Fatalf("stream list over %s:\n%s", cs, out)
			}
			r := e.run("stream", "list", "--transport", "bogus")
			r.wantCode(t, ExitUsage)
			r = e.run("stream", "list", "--addr", cs, "--transport", "tcp")
			r.wantCode(t, ExitUsage)
		})
	}
}

// TestQUICVerificationNote runs the real binary over QUIC: without TLS
// settings the certificate is not verified and a note on standard error
// says so; --tls-insecure, which asks for that, hides it.
func TestQUICVerificationNote(t *testing.T) {
	bin := iggoBinary(t)
	srv := itest.Start(t, itest.WithTransport(itest.TransportQUIC))
	env := []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml"), "HOME=" + t.TempDir()}
	r := runBinary(t, bin, env, "", "--transport", "quic", "--addr", srv.TransportAddr, "ping")
	if r.code != ExitOK || r.stderr != quicUnverifiedNote+"\n" {
		t.Fatalf("ping over QUIC: exit %d, stderr %q; want the note", r.code, r.stderr)
	}
	r = runBinary(t, bin, env, "", "--transport", "quic", "--addr", srv.TransportAddr, "--tls-insecure", "ping")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("ping over QUIC with --tls-insecure: exit %d, stderr %q; want no note", r.code, r.stderr)
	}
}
