package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/internal/testutil"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// iggoBinary builds cmd/iggo once per test run (skipped in -short mode
// or without a go command) and returns its path.
func iggoBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the iggo binary; skipped in -short mode")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "iggo-cli-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "iggo")
		buildOut, buildErr = exec.Command(goCmd, "build", "-o", binPath, "github.com/iggo-dev/iggo/cmd/iggo").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/iggo: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// TestMain removes the built binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// binRun is one run of the real binary.
type binRun struct {
	code           int
	stdout, stderr string
}

func runBinary(t *testing.T, bin string, env []string, stdin string, args ...string) binRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := binRun{stdout: out.String(), stderr: errb.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run iggo %v: %v", args, err)
	}
	return r
}

func TestBinary(t *testing.T) {
	bin := iggoBinary(t)
	srv := itest.Start(t)
	env := []string{EnvAddr + "=" + srv.Addr, EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml"), "HOME=" + t.TempDir()}
	ok := func(stdin string, args ...string) string {
		t.Helper()
		r := runBinary(t, bin, env, stdin, args...)
		if r.code != 0 {
			t.Fatalf("iggo %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	wantLines(t, ok("", "ping"), "pong from "+srv.Addr)
	ok("", "stream", "create", "s")
	ok("", "topic", "create", "s", "t", "2")
	wantLines(t, ok("one\ntwo\n", "send", "s", "t", "--partition", "1"), "sent 2 message(s) to s/t: partition 1 offsets 0-1")
	if got := ok("", "poll", "s", "t", "-p", "1", "--offset", "0", "--raw"); got != "one\ntwo\n" {
		t.Fatalf("poll --raw = %q", got)
	}
	ms := jsonLines[polled](t, ok("", "poll", "s", "t", "-p", "1", "--last", "--count", "1", "-o", "json"))
	if len(ms) != 1 || *ms[0].Payload != "two" || ms[0].Offset != 1 {
		t.Fatalf("poll -o json = %+v", ms)
	}
	wantLines(t, ok("", "completion", "bash"), "bash completion")

	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr string
	}{
		{"unknown stream", nil, []string{"stream", "get", "nope"}, ExitError, "iggo: get stream nope: StreamIdNotFound (error 1009)\n"},
		{"send to an unknown stream", nil, []string{"send", "nope", "t", "x"}, ExitError, "iggo: send to nope/t: StreamIdNotFound (error 1009)\n"},
		{"usage", nil, []string{"stream", "create"}, ExitUsage, "iggo: iggo stream create: want 1 argument(s), got 0 (usage: iggo stream create NAME [flags])\n"},
		{"unknown flag", nil, []string{"stream", "list", "--nope"}, ExitUsage, "iggo: unknown flag: --nope (see 'iggo stream list --help')\n"},
		{"refused login", nil, []string{"stream", "list", "--password", "nope"}, ExitAuth, "iggo: log in as iggy to " + srv.Addr + ": refused: InvalidCredentials (error 42)\n"},
		{"unreachable", []string{EnvAddr + "=127.0.0.1:1"}, []string{"ping"}, ExitConnection, "iggo: cannot connect to 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBinary(t, bin, append(append([]string(nil), env...), tc.env...), "", tc.args...)
			if r.code != tc.code || r.stderr != tc.stderr || r.stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit %d, stderr %q", r.code, r.stderr, r.stdout, tc.code, tc.stderr)
			}
		})
	}

	t.Run("follow ends on SIGINT", func(t *testing.T) {
		cmd := exec.Command(bin, "poll", "s", "t", "--follow", "--first", "--raw", "--interval", "5ms")
		cmd.Env = env
		var errb bytes.Buffer
		out := &testutil.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, out, "two\n")
		ok("", "send", "s", "t", "-p", "0", "three")
		waitFor(t, out, "three\n")
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("poll --follow after SIGINT: %v\n%s", err, errb.String())
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatal("poll --follow did not end after SIGINT")
		}
	})
}
