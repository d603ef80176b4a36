package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/itest"
)

// TestTLSMismatch runs the real binary with a TLS setting that does not
// match the server: the error says so (naming the context when the
// setting came from one) and comes well before --timeout.
func TestTLSMismatch(t *testing.T) {
	bin := iggoBinary(t)
	tlsSrv := itest.Start(t, itest.WithTLS())
	plain := itest.Start(t)
	env := []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml"), "HOME=" + t.TempDir()}
	run := func(extra []string, args ...string) binRun {
		t.Helper()
		start := time.Now()
		r := runBinary(t, bin, append(append([]string(nil), env...), extra...), "", args...)
		if d := time.Since(start); d > 8*time.Second {
			t.Fatalf("iggo %s took %s; the --timeout is 30s but the mismatch should be found at once", strings.Join(args, " "), d)
		}
		return r
	}
	want := func(r binRun, args []string, msg ...string) {
		t.Helper()
		if r.code != ExitConnection || strings.Count(r.stderr, "\n") != 1 {
			t.Fatalf("iggo %s: exit %d, stderr %q; want exit %d and one line", strings.Join(args, " "), r.code, r.stderr, ExitConnection)
		}
		for _, m := range msg {
			if !strings.Contains(r.stderr, m) {
				t.Fatalf("iggo %s: stderr %q lacks %q", strings.Join(args, " "), r.stderr, m)
			}
		}
	}
	// The contexts live in their own file, so that no current context
	// applies to the other cases.
	ctxs := []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml")}
	if r := run(ctxs, "context", "create", "secure", "--addr", plain.Addr, "--tls-insecure"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(ctxs, "context", "create", "clear", "--addr", tlsSrv.Addr); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, tc := range []struct {
		env  []string
		args []string
		want []string
	}{
		// A plain client and a TLS server.
		{nil, []string{"ping", "--addr", tlsSrv.Addr}, []string{"cannot connect to " + tlsSrv.Addr, "the server speaks TLS: add --tls"}},
		{nil, []string{"stream", "list", "--addr", tlsSrv.Addr}, []string{"the server speaks TLS: add --tls"}},
		{ctxs, []string{"--context", "clear", "stream", "list"}, []string{"the server speaks TLS: add --tls", `context "clear" does not turn TLS on`}},
		{ctxs, []string{"--context", "clear", "ping"}, []string{"the server speaks TLS: add --tls", `context "clear"`}},
		// A TLS client and a plain server.
		{nil, []string{"stream", "list", "--addr", plain.Addr, "--tls-insecure"}, []string{"cannot connect to " + plain.Addr, "the server is not speaking TLS: drop --tls"}},
		{nil, []string{"ping", "--addr", plain.Addr, "--tls"}, []string{"the server is not speaking TLS: drop --tls"}},
		{ctxs, []string{"--context", "secure", "stream", "list"}, []string{"the server is not speaking TLS", `context "secure" turns TLS on`}},
		{[]string{EnvTLSInsecure + "=true"}, []string{"stream", "list", "--addr", plain.Addr}, []string{"the server is not speaking TLS", "unset " + EnvTLS}},
		{nil, []string{"stream", "list", "--addr", "iggy://iggy:iggy@" + plain.Addr + "?tls=true"}, []string{"the server is not speaking TLS: drop tls=true from the connection string"}},
	} {
		args := append(tc.args, "--timeout", "30s")
		want(run(tc.env, args...), args, tc.want...)
	}
	// A matching setting still works, and an address where nothing
	// listens is not mistaken for a mismatch.
	if r := run(nil, "--addr", tlsSrv.Addr, "--tls-insecure", "ping"); r.code != 0 {
		t.Fatalf("ping over TLS: %s", r.stderr)
	}
	r := run(nil, "ping", "--addr", "127.0.0.1:1")
	if r.code != ExitConnection || !strings.Contains(r.stderr, "connection refused") {
		t.Fatalf("ping to a closed port: exit %d, %q", r.code, r.stderr)
	}
}
