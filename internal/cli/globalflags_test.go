package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/itest"
)

// TestGlobalFlagsBeforeSubcommand runs the real binary with the
// connection flags before, after and around the subcommand, against a
// TLS server (so a dropped --tls would fail).
func TestGlobalFlagsBeforeSubcommand(t *testing.T) {
	bin := iggoBinary(t)
	srv := itest.Start(t, itest.WithTLS())
	ca := filepath.Join(srv.Dir, "cert.pem")
	env := []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml"), "HOME=" + t.TempDir()}
	for _, args := range [][]string{
		{"--addr", srv.Addr, "--tls-insecure", "stream", "list"},
		{"--tls-insecure", "--addr", srv.Addr, "stream", "list"},
		{"--addr", srv.Addr, "--tls", "--tls-ca", ca, "stream", "list"},
		{"--addr", srv.Addr, "--tls", "--tls-ca=" + ca, "--timeout", "5s", "-o", "json", "stream", "list"},
		{"--addr", srv.Addr, "stream", "--tls-insecure", "list"},
		{"stream", "list", "--addr", srv.Addr, "--tls-insecure"},
		{"--tls-insecure", "ping", "--addr", srv.Addr},
	} {
		r := runBinary(t, bin, env, "", args...)
		if r.code != ExitOK {
			t.Fatalf("iggo %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// A client flag is refused by the commands that do not take it, not
	// silently ignored (--check-config: nothing starts even if it were).
	for _, args := range [][]string{
		{"--addr", srv.Addr, "server", "--check-config"},
		{"server", "--check-config", "--tls"},
		{"--timeout", "1s", "bench", "pinned-producer"},
	} {
		r := runBinary(t, bin, env, "", args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "is a client flag") {
			t.Fatalf("iggo %s: exit %d, stderr %q; want a usage error", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	help := runBinary(t, bin, env, "", "--help").stdout
	for _, f := range []string{"--addr", "--transport", "--tls ", "--tls-ca", "--tls-insecure", "--tls-server-name", "--username", "--password", "--token", "--context", "--timeout", "--output", "--version"} {
		if !strings.Contains(help, f) {
			t.Fatalf("iggo --help lacks %s:\n%s", f, help)
		}
	}
	if h := runBinary(t, bin, env, "", "server", "--help").stdout; strings.Contains(h, "--addr") || strings.Contains(h, "Global Flags") {
		t.Fatalf("iggo server --help lists the client flags:\n%s", h)
	}
}
