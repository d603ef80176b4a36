package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/internal/testutil"
)

// cliEnv runs the command line in-process against a real broker on
// loopback, with a private contexts file.
type cliEnv struct {
	t       *testing.T
	srv     *itest.Server
	environ []string
}

// result is one command's outcome.
type result struct {
	args   []string
	code   int
	stdout string
	stderr string
}

// newCLI starts a broker and returns an environment pointing the CLI at
// it through IGGO_ADDR.
func newCLI(t *testing.T, opts ...itest.Option) *cliEnv {
	t.Helper()
	srv := itest.Start(t, opts...)
	return &cliEnv{t: t, srv: srv, environ: []string{
		EnvAddr + "=" + srv.Addr,
		EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml"),
	}}
}

// run executes one command line with no standard input.
func (e *cliEnv) run(args ...string) result { return e.runStdin("", args...) }

// runStdin executes one command line with stdin as its standard input.
func (e *cliEnv) runStdin(stdin string, args ...string) result {
	e.t.Helper()
	return e.runCtx(context.Background(), stdin, args...)
}

func (e *cliEnv) runCtx(ctx context.Context, stdin string, args ...string) result {
	var out, errb testutil.SyncBuffer
	code := Execute(ctx, Env{Args: args, Environ: e.environ, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return result{args: args, code: code, stdout: out.String(), stderr: errb.String()}
}

// ok runs a command that must succeed and returns its standard output.
func (e *cliEnv) ok(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	r.wantCode(e.t, ExitOK)
	return r.stdout
}

// okJSON runs a command with -o json and decodes its output into v.
func (e *cliEnv) okJSON(v any, args ...string) {
	e.t.Helper()
	out := e.ok(append(args, "-o", "json")...)
	reflect.ValueOf(v).Elem().SetZero() // decode fresh, not over an earlier result
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("iggo %s: output is not JSON (%v):\n%s", strings.Join(args, " "), err, out)
	}
}

// wantCode fails unless the command exited with code.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("iggo %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, code, r.stdout, r.stderr)
	}
}

// wantError checks a failed command: the exit code, and one line on
// standard error, "iggo: ...", containing every want.
func (r result) wantError(t *testing.T, code int, want ...string) {
	t.Helper()
	r.wantCode(t, code)
	line := strings.TrimSuffix(r.stderr, "\n")
	if !strings.HasPrefix(line, "iggo: ") || strings.Contains(line, "\n") {
		t.Fatalf("iggo %s: stderr is not one \"iggo: \" line:\n%q", strings.Join(r.args, " "), r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Fatalf("iggo %s: stderr %q lacks %q", strings.Join(r.args, " "), line, w)
		}
	}
}

// wantLines checks that out contains each want as a substring of some line.
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

// jsonLines decodes JSON-lines output.
func jsonLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var vs []T
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		vs = append(vs, v)
	}
	return vs
}
