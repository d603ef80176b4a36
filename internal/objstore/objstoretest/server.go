// Package objstoretest runs a real S3-compatible server for tests: one
// versitygw process with its posix backend, in which every object is a
// plain file under [Server.Dir] that a test can read, corrupt or remove.
//
// The binary is found through $IGGO_VERSITYGW, then PATH, then
// $(go env GOPATH)/bin. Without it [Start] skips the test, or fails it when
// the CI environment variable is set.
package objstoretest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
)

// Defaults of a started server.
const (
	// Bucket is the bucket Start creates.
	Bucket = "iggo-test"
	// Region is the region the server reports.
	Region = "us-east-1"

	accessKey = "iggo-test-access"
	secretKey = "iggo-test-secret-0123456789"

	startTimeout = 20 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is a running (or stopped) versitygw process.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:port.
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// Bucket is the bucket created at start.
	Bucket string
	// Region is the region the server reports.
	Region string
	// Dir is the posix backend's root: bucket b is the directory Dir/b and
	// object k of it the file Dir/b/k.
	Dir string

	bin     string
	addr    string // 127.0.0.1:port
	logPath string
	sidecar string // metadata directory when the file system lacks xattrs

	mu   sync.Mutex
	proc *process // nil when stopped
}

// process is one run of the binary.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // the exit status, once done is closed
}

// Start starts versitygw on a free 127.0.0.1 port with a fresh root under
// t.TempDir(), creates the bucket [Bucket], waits until the server answers
// and stops it in t.Cleanup. When the binary is missing it skips the test,
// or fails it if the CI environment variable is set.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := findBinary()
	switch {
	case errors.Is(err, errNoBinary) && os.Getenv("CI") == "":
		t.Skipf("objstoretest: %v; install it with %s", err, InstallHint)
	case err != nil:
		t.Fatalf("objstoretest: %v; install it with %s", err, InstallHint)
	}
	tmp := t.TempDir()
	s := &Server{
		AccessKey: accessKey,
		SecretKey: secretKey,
		Bucket:    Bucket,
		Region:    Region,
		Dir:       filepath.Join(tmp, "root"),
		bin:       bin,
		logPath:   filepath.Join(tmp, "versitygw.log"),
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, s.Bucket), 0o755); err != nil {
		t.Fatalf("objstoretest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("objstoretest: %v", err)
		}
		if t.Failed() {
			t.Logf("objstoretest: versitygw output:\n%s", s.logTail())
		}
	})
	// Another process may take the free port before versitygw binds it;
	// try a few.
	for attempt := 1; ; attempt++ {
		s.addr, err = freeAddr()
		if err != nil {
			t.Fatalf("objstoretest: %v", err)
		}
		s.Endpoint = "http://" + s.addr
		err = s.start()
		if err == nil {
			return s
		}
		if attempt == 3 {
			t.Fatalf("objstoretest: %v\nversitygw output:\n%s", err, s.logTail())
		}
	}
}

// Stop stops the process; the data stays for [Server.Restart]. Stopping a
// stopped server does nothing.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("objstoretest: %v", err)
	}
}

// Restart starts the process again on the same port and root.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("objstoretest: %v", err)
	}
	if err := s.start(); err != nil {
		t.Fatalf("objstoretest: restart: %v\nversitygw output:\n%s", err, s.logTail())
	}
}

// Config returns the objstore configuration for the bucket with the given
// key prefix, path-style addressing and a 10 s request timeout.
func (s *Server) Config(prefix string) objstore.Config {
	return objstore.Config{
		Endpoint:        s.Endpoint,
		Region:          s.Region,
		Bucket:          s.Bucket,
		Prefix:          prefix,
		AccessKeyID:     s.AccessKey,
		SecretAccessKey: s.SecretKey,
		PathStyle:       true,
		Timeout:         10 * time.Second,
	}
}

// ObjectPath returns the file that holds object key of the bucket.
func (s *Server) ObjectPath(key string) string {
	return filepath.Join(s.Dir, s.Bucket, filepath.FromSlash(key))
}

// start runs the binary and waits until it answers HTTP requests.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return nil
	}
	p, err := s.spawn()
	if err != nil {
		return err
	}
	err = waitReady(p, s.addr)
	if err != nil && s.sidecar == "" && strings.Contains(s.logTail(), "xattrs are not supported") {
		// The file system has no extended attributes: keep the metadata
		// in a sidecar directory instead.
		s.sidecar = filepath.Join(filepath.Dir(s.Dir), "meta")
		if err = os.MkdirAll(s.sidecar, 0o755); err != nil {
			return err
		}
		if p, err = s.spawn(); err != nil {
			return err
		}
		err = waitReady(p, s.addr)
	}
	if err != nil {
		_ = p.kill()
		return err
	}
	s.proc = p
	return nil
}

// spawn starts the binary with its output appended to the log file.
func (s *Server) spawn() (*process, error) {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("versitygw log: %w", err)
	}
	defer logFile.Close()
	args := []string{
		"--port", s.addr,
		"--access", s.AccessKey,
		"--secret", s.SecretKey,
		"--region", s.Region,
		"--quiet",
		"posix",
	}
	if s.sidecar != "" {
		args = append(args, "--sidecar", s.sidecar)
	}
	args = append(args, s.Dir)
	cmd := exec.Command(s.bin, args...)
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	fmt.Fprintf(logFile, "--- %s %s\n", time.Now().Format(time.RFC3339), strings.Join(cmd.Args, " "))
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop ends the process: SIGTERM (where there is one), then a kill after
// stopTimeout.
func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return p.kill()
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		if err := p.kill(); err != nil {
			return err
		}
		return fmt.Errorf("versitygw (pid %d) ignored SIGTERM for %s and was killed", p.cmd.Process.Pid, stopTimeout)
	}
}

// kill kills the process and waits for it to exit.
func (p *process) kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill versitygw (pid %d): %w", p.cmd.Process.Pid, err)
	}
	<-p.done
	return nil
}

// waitReady waits until the server at addr answers an HTTP request (any
// status: an anonymous request is refused) or the process exits.
func waitReady(p *process, addr string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("versitygw exited at start: %v", p.err)
		default:
		}
		resp, err := client.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw did not answer on %s within %s: %w", addr, startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// serverEnv is the test process's environment without the variables
// versitygw reads its settings from, so that only the flags count.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "VGW_"), strings.HasPrefix(name, "ROOT_"),
			strings.HasPrefix(name, "AWS_"), name == "LOGFILE", name == "WEBHOOK":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Output returns the end (up to 8 KiB) of what the server printed, across
// restarts; Start logs it when the test fails.
func (s *Server) Output() string { return s.logTail() }

// logTail returns the last lines of the server's output.
func (s *Server) logTail() string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no output: %v)", err)
	}
	const maxTail = 8 << 10
	if len(data) > maxTail {
		data = data[len(data)-maxTail:]
	}
	return string(data)
}
