package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrors: a flag value that does not parse and a malformed
// address are usage errors (exit 2) that name the flag and what it
// takes; no connection is attempted.
func TestUsageErrors(t *testing.T) {
	e := &cliEnv{t: t, environ: []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml")}}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"poll", "s", "t", "--count", "-5"}, []string{`--count "-5": want a whole number from 0 to 4294967295`, "iggo poll --help"}},
		{[]string{"ping", "--count", "x"}, []string{`--count "x": want a whole number`}},
		{[]string{"ping", "--timeout", "soon"}, []string{`--timeout "soon": want a duration`}},
		{[]string{"--tls=maybe", "ping"}, []string{`--tls "maybe": want true or false`}},
		{[]string{"--addr", "127.0.0.1:99999", "ping"}, []string{`--addr "127.0.0.1:99999": the port must be a number from 1 to 65535`}},
		{[]string{"stream", "list", "--addr", "127.0.0.1:0"}, []string{"the port must be"}},
		{[]string{"stream", "list", "--addr", "localhost"}, []string{`--addr "localhost": want host:port`}},
		{[]string{"stream", "list", "--addr", "iggy://u:p@127.0.0.1:70000"}, []string{"the port must be"}},
	} {
		r := e.run(tc.args...)
		r.wantError(t, ExitUsage, tc.want...)
		for _, bad := range []string{"strconv.", "cannot connect"} {
			if strings.Contains(r.stderr, bad) {
				t.Fatalf("iggo %v: stderr %q has %q", tc.args, r.stderr, bad)
			}
		}
	}
}
