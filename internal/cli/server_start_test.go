package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serverEnv keeps `iggo server` off the default QUIC, WebSocket and
// HTTP ports in tests.
var serverEnv = []string{"IGGY_QUIC_ENABLED=false", "IGGY_WEBSOCKET_ENABLED=false", "IGGY_HTTP_ENABLED=false", "HOME=/nonexistent"}

// TestServerStartFailures runs the real binary: a start that cannot
// succeed says why in one line, exits 1 and leaves nothing behind.
func TestServerStartFailures(t *testing.T) {
	bin := iggoBinary(t)
	dir := t.TempDir()

	t.Run("busy port", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		data := filepath.Join(dir, "busy")
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		keep := filepath.Join(data, "keep")
		if err := os.WriteFile(keep, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// --fresh must not delete the data of a start that fails.
		r := runBinary(t, bin, serverEnv, "", "server", "--fresh", "--data-path", data, "--tcp-address", ln.Addr().String())
		wantOneLine(t, r, ExitError, "cannot listen for TCP on "+ln.Addr().String(), "tcp.address", "address already in use")
		entries, _ := os.ReadDir(data)
		if len(entries) != 1 || entries[0].Name() != "keep" {
			t.Fatalf("a start that failed on a busy port changed the data directory: %v", entries)
		}
	})

	t.Run("data directory under a file", func(t *testing.T) {
		file := filepath.Join(dir, "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		r := runBinary(t, bin, serverEnv, "", "server", "--data-path", filepath.Join(file, "data"), "--tcp-address", "127.0.0.1:0")
		wantOneLine(t, r, ExitError, "data directory "+filepath.Join(file, "data")+" (system.path): "+file+" is not a directory")
	})

	t.Run("invalid configuration", func(t *testing.T) {
		r := runBinary(t, bin, append([]string{"IGGY_TCP_ADDRESS=notanaddr"}, serverEnv...), "", "server", "--data-path", filepath.Join(dir, "d"))
		wantOneLine(t, r, ExitError, `iggo: invalid configuration: tcp.address: "notanaddr" is not host:port`)
		if _, err := os.Stat(filepath.Join(dir, "d")); err == nil {
			t.Fatal("an invalid configuration created the data directory")
		}
	})

	t.Run("usage", func(t *testing.T) {
		r := runBinary(t, bin, serverEnv, "", "server", "--replica-id", "x")
		wantOneLine(t, r, ExitUsage, `--replica-id "x": want a whole number`)
	})
}

// wantOneLine checks that r exited with code and printed one line on
// standard error containing every want.
func wantOneLine(t *testing.T, r binRun, code int, want ...string) {
	t.Helper()
	if r.code != code || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want exit %d and one line", r.code, r.stderr, code)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr %q lacks %q", r.stderr, w)
		}
	}
}

// TestServerCheckConfigSources: --check-config names every layer the
// configuration came from.
func TestServerCheckConfigSources(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		args    []string
		want    string
	}{
		{nil, nil, "configuration is valid (built-in defaults; "},
		{[]string{"IGGY_TCP_ADDRESS=127.0.0.1:1234", "IGGY_ROOT_PASSWORD=x", "IGGY_ROOT_USERNAME=y"}, nil, "(built-in defaults, environment IGGY_TCP_ADDRESS; "},
		{[]string{"IGGY_HEARTBEAT_INTERVAL=5 s"}, []string{"--tcp-address", "127.0.0.1:1"}, "(built-in defaults, environment IGGY_HEARTBEAT_INTERVAL, flags --tcp-address; "},
	} {
		e := &cliEnv{t: t, environ: append(tc.environ, "HOME="+t.TempDir())}
		r := e.run(append([]string{"server", "--check-config"}, tc.args...)...)
		r.wantCode(t, ExitOK)
		wantLines(t, r.stdout, tc.want)
	}
}
