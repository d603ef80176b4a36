//go:build !windows

package tiertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

// Bounds of starting and stopping a server.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
	// logTailBytes is how much of a server's log a failed test prints.
	logTailBytes = 16 << 10
)

// serverConfig is what a test chooses of an iggo server's configuration;
// the rest is written by writeConfig (loopback TCP on a free port, no
// QUIC, WebSocket or HTTP listener).
type serverConfig struct {
	// store is the object store; the server uploads to its bucket.
	store *objstoretest.Server
	// prefix is tiered_storage.prefix.
	prefix string
	// localRetention is tiered_storage.local_retention_size ("200 MiB",
	// "0").
	localRetention string
	// retentionInterval is data_maintenance.messages.interval; "" keeps
	// the default.
	retentionInterval string
	// uploadInterval is tiered_storage.upload_interval; "" keeps the
	// default.
	uploadInterval string
	// requestTimeout is tiered_storage.request_timeout; "" keeps the
	// default.
	requestTimeout string
}

// server is one `iggo server` process on a data directory of the test;
// it can be killed and started again on the same directory.
type server struct {
	t       testing.TB
	cfg     serverConfig
	dir     string // the test's directory: config file and log
	data    string // system.path
	cfgPath string
	logPath string

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	// Addr is the TCP address of the running process.
	Addr string
}

// startServer writes the configuration and starts the server, waiting
// until it accepts logins. The server is killed (by PID) in the test
// cleanup; its log is copied to the output when the test failed or
// IGGO_TEST_LOG is set.
func startServer(t testing.TB, cfg serverConfig) *server {
	t.Helper()
	requireBinary(t)
	dir := t.TempDir()
	s := &server{t: t, cfg: cfg, dir: dir, data: filepath.Join(dir, "data"),
		cfgPath: filepath.Join(dir, "config.toml"), logPath: filepath.Join(dir, "server.log")}
	if err := os.WriteFile(s.cfgPath, []byte(s.configText()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Kill()
		switch {
		case os.Getenv("IGGO_TEST_LOG") != "":
			t.Logf("server log:\n%s", s.logTail(0))
		case t.Failed():
			t.Logf("server log (last %d KiB):\n%s", logTailBytes>>10, s.logTail(logTailBytes))
		}
	})
	s.Start()
	return s
}

// configText is the server's TOML configuration.
func (s *server) configText() string {
	c := s.cfg
	var b strings.Builder
	fmt.Fprintf(&b, "[system]\npath = %q\n\n", s.data)
	b.WriteString("[system.logging]\nlevel = \"info\"\nfile_enabled = false\n\n")
	b.WriteString("[tcp]\naddress = \"127.0.0.1:0\"\n\n")
	b.WriteString("[quic]\nenabled = false\n\n[websocket]\nenabled = false\n\n[http]\nenabled = false\n\n")
	if c.retentionInterval != "" {
		fmt.Fprintf(&b, "[data_maintenance.messages]\ncleaner_enabled = true\ninterval = %q\n\n", c.retentionInterval)
	}
	b.WriteString("[tiered_storage]\nenabled = true\n")
	fmt.Fprintf(&b, "endpoint = %q\nregion = %q\nbucket = %q\nprefix = %q\n", c.store.Endpoint, c.store.Region, c.store.Bucket, c.prefix)
	fmt.Fprintf(&b, "access_key_id = %q\nsecret_access_key = %q\npath_style = true\n", c.store.AccessKey, c.store.SecretKey)
	fmt.Fprintf(&b, "local_retention_size = %q\n", c.localRetention)
	if c.uploadInterval != "" {
		fmt.Fprintf(&b, "upload_interval = %q\n", c.uploadInterval)
	}
	if c.requestTimeout != "" {
		fmt.Fprintf(&b, "request_timeout = %q\n", c.requestTimeout)
	}
	return b.String()
}

// runtimeConfig is where the server writes its effective configuration,
// with the TCP address it bound.
func (s *server) runtimeConfig() string {
	return filepath.Join(s.data, "runtime", "current_config.toml")
}

// Start starts the process on the data directory and waits until a login
// succeeds.
func (s *server) Start() {
	t := s.t
	t.Helper()
	if s.cmd != nil {
		t.Fatal("server already running")
	}
	// The bound address is read from the runtime configuration; remove
	// the one of an earlier run first.
	if err := os.Remove(s.runtimeConfig()); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "--- %s start\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(iggoBin, "server", "--config", s.cfgPath)
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	done := s.done
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	deadline := time.Now().Add(startTimeout)
	for s.Addr = ""; s.Addr == ""; {
		s.Addr = tcpAddress(s.runtimeConfig())
		if s.Addr != "" {
			break
		}
		select {
		case <-done:
			s.cmd = nil
			t.Fatalf("iggo server exited at start:\n%s", s.logTail(logTailBytes))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("iggo server did not publish its address within %s:\n%s", startTimeout, s.logTail(logTailBytes))
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for {
		c, err := client.Dial(ctx, s.Addr, client.WithCredentials("iggy", "iggy"),
			client.WithReconnect(client.ReconnectPolicy{Disabled: true}))
		if err == nil {
			c.Close()
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("iggo server at %s does not accept logins within %s: %v", s.Addr, startTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill sends SIGKILL to the process and waits for it to exit; a stopped
// server is left alone.
func (s *server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// Stop sends SIGTERM and waits for a graceful exit, killing the process
// after stopTimeout (which fails the test).
func (s *server) Stop() {
	t := s.t
	t.Helper()
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
		s.cmd = nil
	case <-time.After(stopTimeout):
		s.Kill()
		t.Fatalf("iggo server ignored SIGTERM for %s and was killed", stopTimeout)
	}
}

// Dial returns a client logged in as root, closed in the test cleanup.
// opts are added to the defaults.
func (s *server) Dial(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, s.Addr, append([]client.Option{client.WithCredentials("iggy", "iggy")}, opts...)...)
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// PartitionDir returns the directory of the server's only partition
// ({system.path}/streams/{stream}/topics/{topic}-{incarnation}/partitions/{id}).
func (s *server) PartitionDir(t testing.TB) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(s.data, "streams", "*", "topics", "*", "partitions", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 1 {
		t.Fatalf("want one partition directory under %s, found %v", s.data, dirs)
	}
	return dirs[0]
}

// logTail returns the last max bytes of the server's log (all of it for
// max 0).
func (s *server) logTail(max int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if max > 0 && len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// tcpAddress returns the [tcp] address of a runtime configuration file,
// or "" while there is none.
func tcpAddress(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		if section != "[tcp]" {
			continue
		}
		if v, ok := strings.CutPrefix(line, "address"); ok {
			v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "="))
			addr, err := strconv.Unquote(v)
			if err == nil && !strings.HasSuffix(addr, ":0") {
				return addr
			}
		}
	}
	return ""
}

// serverEnv is the test's environment without the variables the server
// reads its configuration from, so only the file counts.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "IGGY_") || strings.HasPrefix(name, "AWS_") || name == "RUST_LOG" {
			continue
		}
		env = append(env, kv)
	}
	return env
}
