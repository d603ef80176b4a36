package cli

import (
	"strings"
	"testing"
)

// TestVersion: --version, -v and the version command print the same
// text, naming the protocol and the Go version.
func TestVersion(t *testing.T) {
	bin := iggoBinary(t)
	var first string
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		r := runBinary(t, bin, nil, "", args...)
		if r.code != ExitOK || r.stderr != "" {
			t.Fatalf("iggo %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		wantLines(t, r.stdout, "iggo 0.", "Iggy protocol 0.11.0", "built with go1.")
		if first == "" {
			first = r.stdout
		} else if r.stdout != first {
			t.Fatalf("iggo %v printed %q, iggo --version %q", args, r.stdout, first)
		}
	}
	// A backquoted word in a flag's usage is pflag's value name: --join
	// takes none.
	h := runBinary(t, bin, nil, "", "server", "--help").stdout
	if !strings.Contains(h, "--join   ") {
		t.Fatalf("server --help renders --join with a value:\n%s", h)
	}
}
