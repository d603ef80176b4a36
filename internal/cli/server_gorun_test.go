//go:build unix

package cli

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
)

// The README's first command is `go run ./cmd/iggo server`, and it says
// SIGTERM stops the server. go run does not pass SIGTERM on, so the
// server watches its go run parent: SIGTERM to go run (its PID only)
// must end the server too, gracefully.
func TestServerExitsWithGoRun(t *testing.T) {
	iggoBinary(t) // skips in -short mode; warms the build cache for go run
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "server.toml")
	writeTestFile(t, cfgPath, quietServerTOML(filepath.Join(dir, "data"), "info"))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(goCmd, "run", "./cmd/iggo", "server", "--config", cfgPath)
	cmd.Dir = filepath.Join("..", "..")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = w // inherited by the server: EOF only once both have exited
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var log testutil.SyncBuffer
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	serverPID := 0
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if serverPID > 0 {
			_ = syscall.Kill(serverPID, syscall.SIGKILL)
		}
	})
	pidRE := regexp.MustCompile(`msg="iggo server ready" .*pid=(\d+)`)
	deadline := time.Now().Add(3 * time.Minute) // go run links the binary first
	for serverPID == 0 {
		if m := pidRE.FindStringSubmatch(log.String()); m != nil {
			serverPID, _ = strconv.Atoi(m[1])
			break
		}
		select {
		case <-eof:
			t.Fatalf("go run ended before the server was ready:\n%s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready under go run:\n%s", log.String())
		}
	}
	if serverPID == cmd.Process.Pid {
		t.Fatalf("server pid %d is go run's own", serverPID)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	select {
	case <-eof:
	case <-time.After(30 * time.Second):
		t.Fatalf("server (pid %d) still running 30 s after go run got SIGTERM:\n%s", serverPID, log.String())
	}
	// Its stderr closes while the process exits, a moment before the
	// kernel marks it gone: give that moment (bounded) before judging.
	for gone := time.Now().Add(5 * time.Second); processRunning(serverPID); {
		if time.Now().After(gone) {
			t.Fatalf("server pid %d still running 5 s after its output ended", serverPID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := log.String(); !strings.Contains(got, "go run exited") {
		t.Errorf("no shutdown notice in the log:\n%s", got)
	}
}

// processRunning reports whether pid exists and is not a zombie (an
// orphan's exit is reaped by whoever adopted it, maybe never in a
// container).
func processRunning(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: existence is all we know
	}
	// The state follows the parenthesized command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
