package cli

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/itest"
)

// with returns a copy of e whose environment has these KEY=VALUE pairs
// (replacing the same keys) and lacks the bare KEYs given.
func (e *cliEnv) with(kvs ...string) *cliEnv {
	env := slices.Clone(e.environ)
	for _, kv := range kvs {
		k, _, set := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(x string) bool { return strings.HasPrefix(x, k+"=") })
		if set {
			env = append(env, kv)
		}
	}
	return &cliEnv{t: e.t, srv: e.srv, environ: env}
}

// userOf returns the user id `me` reports.
func userOf(t *testing.T, e *cliEnv, args ...string) uint32 {
	t.Helper()
	var me clientView
	e.okJSON(&me, append([]string{"me"}, args...)...)
	if me.UserID == nil {
		t.Fatalf("me %v: not logged in", args)
	}
	return *me.UserID
}

func TestContexts(t *testing.T) {
	base := newCLI(t)
	base.ok("user", "create", "alice", "alice-pw", "--global", "all")
	e := base.with(EnvAddr) // only contexts and flags say where to go
	var views []contextView
	e.okJSON(&views, "context", "list")
	if len(views) != 0 {
		t.Fatalf("no contexts yet, got %+v", views)
	}

	wantLines(t, e.ok("context", "create", "dev", "--addr", base.srv.Addr, "--username", "alice", "--password", "alice-pw"), `context "dev" saved`)
	if got := userOf(t, e); got != 1 {
		t.Fatalf("the first context is current: user %d", got)
	}
	e.ok("context", "create", "root", "--addr", base.srv.Addr)
	if got := userOf(t, e); got != 1 {
		t.Fatalf("creating a second context must not switch: user %d", got)
	}
	if got := userOf(t, e, "--context", "root"); got != 0 {
		t.Fatalf("--context root: user %d", got)
	}
	if got := userOf(t, e.with(EnvContext+"=root")); got != 0 {
		t.Fatalf("IGGO_CONTEXT=root: user %d", got)
	}
	wantLines(t, e.ok("context", "use", "root"), `current context is "root"`)
	if got := userOf(t, e); got != 0 {
		t.Fatalf("after use root: user %d", got)
	}
	e.okJSON(&views, "context", "list")
	want := []contextView{
		{Name: "dev", Addr: base.srv.Addr, Username: "alice", Password: true},
		{Name: "root", Current: true, Addr: base.srv.Addr},
	}
	if !cmp.Equal(views, want) {
		t.Fatalf("context list: %s", cmp.Diff(want, views))
	}
	out := e.ok("context", "show", "dev")
	wantLines(t, out, "Name:", "dev", "Login:", "alice", "Password set:", "yes")
	if strings.Contains(out, "alice-pw") || strings.Contains(e.ok("context", "list"), "alice-pw") {
		t.Fatal("a password is printed")
	}

	// Precedence, later wins: context, environment, flags.
	e.ok("context", "create", "bad", "--addr", base.srv.Addr, "--username", "alice", "--password", "wrong", "--use")
	e.run("me").wantError(t, ExitAuth, "log in as alice", "InvalidCredentials")
	if got := userOf(t, e.with(EnvPassword+"=alice-pw")); got != 1 {
		t.Fatalf("IGGO_PASSWORD over the context: user %d", got)
	}
	e.with(EnvPassword+"=alice-pw").run("me", "--password", "nope").wantError(t, ExitAuth, "InvalidCredentials")
	if got := userOf(t, e, "--username", "iggy", "--password", "iggy"); got != 0 {
		t.Fatalf("flags over the context: user %d", got)
	}
	e.with(EnvAddr+"=127.0.0.1:1").run("me", "--password", "alice-pw").wantError(t, ExitConnection, "cannot connect to 127.0.0.1:1")
	if got := userOf(t, e.with(EnvAddr+"=127.0.0.1:1"), "--password", "alice-pw", "--addr", base.srv.Addr); got != 1 {
		t.Fatalf("--addr over IGGO_ADDR: user %d", got)
	}

	// A token in a context; a username and password given later replace it.
	token := strings.TrimSpace(base.ok("pat", "create", "ctx", "--username", "alice", "--password", "alice-pw"))
	e.ok("context", "create", "tok", "--addr", base.srv.Addr, "--token", token, "--use")
	if got := userOf(t, e); got != 1 {
		t.Fatalf("token context: user %d", got)
	}
	if got := userOf(t, e.with(EnvUsername+"=iggy", EnvPassword+"=iggy")); got != 0 {
		t.Fatalf("credentials over a context token: user %d", got)
	}
	wantLines(t, e.ok("context", "list"), "tok", "token")

	e.run("context", "create", "tok").wantError(t, ExitError, "already exists")
	e.ok("context", "create", "tok", "--force", "--addr", base.srv.Addr)
	e.run("me", "--context", "nope").wantError(t, ExitUsage, `no context named "nope"`)
	e.run("context", "use", "nope").wantError(t, ExitError, `no context named "nope"`)
	wantLines(t, e.ok("context", "delete", "tok"), `context "tok" deleted`)
	e.run("context", "show").wantError(t, ExitError, "no current context")
	e.run("context", "delete", "tok").wantError(t, ExitError, "no context")

	path := strings.TrimPrefix(e.environ[slices.IndexFunc(e.environ, func(s string) bool { return strings.HasPrefix(s, EnvConfig+"=") })], EnvConfig+"=")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("contexts file mode: %v %v", info, err)
	}
	// A broken file is reported, naming it.
	if err := os.WriteFile(path, []byte("current = [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run("context", "list").wantError(t, ExitError, filepath.Base(path))
}

func TestTLS(t *testing.T) {
	e := newCLI(t, itest.WithTLS())
	ca := filepath.Join(e.srv.Dir, "cert.pem")
	wantLines(t, e.ok("ping", "--tls-ca", ca), "pong")
	e.ok("stream", "create", "s", "--tls-ca", ca)
	e.with(EnvTLSCA+"="+ca).ok("stream", "list")
	e.ok("stream", "list", "--tls-insecure")
	e.ok("stream", "list", "--tls-ca", ca, "--tls-server-name", "localhost")
	e.run("stream", "list", "--tls").wantError(t, ExitConnection, "cannot connect", "certificate")
	e.run("stream", "list", "--tls-ca", ca, "--tls-server-name", "other.example").wantError(t, ExitConnection, "certificate")
	e.run("stream", "list", "--tls-ca", filepath.Join(e.srv.Dir, "missing.pem")).wantError(t, ExitUsage, "--tls-ca")
	e.run("stream", "list", "--tls-ca", filepath.Join(e.srv.Dir, "key.pem")).wantError(t, ExitUsage, "no PEM certificate")
	e.with(EnvTLS+"=maybe").run("stream", "list").wantError(t, ExitUsage, EnvTLS)
	// Plain TCP to a TLS listener: the CLI finds out and says so
	// (tlsmismatch_test.go has the other cases).
	e.run("ping", "--timeout", "300ms").wantError(t, ExitConnection, "the server speaks TLS: add --tls")
}

func TestConnectionErrors(t *testing.T) {
	e := newCLI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	e.run("ping", "--addr", closed).wantError(t, ExitConnection, "cannot connect to "+closed, "connection refused")
	e.with(EnvAddr+"="+closed).run("stream", "list").wantError(t, ExitConnection, "cannot connect")
	e.run("stream", "list", "--password", "nope").wantError(t, ExitAuth, "log in as iggy", "InvalidCredentials (error 42)")
	e.run("stream", "list", "--token", "bogus").wantError(t, ExitAuth, "InvalidPersonalAccessToken")
	// Ping needs no login, so wrong credentials do not matter.
	e.ok("ping", "--password", "nope")
	e.run("stream", "list", "--output", "xml").wantError(t, ExitUsage, "--output")
	e.run("stream", "list", "--timeout", "soon").wantError(t, ExitUsage, "--timeout")
}

// TestAddrList: --addr and IGGO_ADDR take a comma-separated list of
// seeds, tried in order; a malformed list is a usage error; a list of
// unreachable addresses names them.
func TestAddrList(t *testing.T) {
	e := newCLI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	wantLines(t, e.ok("ping", "--addr", closed+","+e.srv.Addr), "pong")
	e.ok("stream", "create", "seeded", "--addr", closed+", "+e.srv.Addr)
	wantLines(t, e.with(EnvAddr+"="+closed+","+e.srv.Addr).ok("stream", "list"), "seeded")
	e.run("stream", "list", "--addr", closed+",,"+e.srv.Addr).wantError(t, ExitUsage, "--addr", "comma-separated")
	e.run("stream", "list", "--addr", closed+",nohost").wantError(t, ExitUsage, "--addr")
	e.run("ping", "--addr", closed+","+closed).wantError(t, ExitConnection, "cannot connect to "+closed+","+closed, "connection refused")
}
