package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
)

// serverProc is a running `iggo server` process whose standard error is
// collected line by line.
type serverProc struct {
	cmd    *exec.Cmd
	stderr *testutil.SyncBuffer
	exited chan error
}

// startServerProc starts name with args and env (PATH and HOME are added)
// and kills it at the end of the test if it is still running.
func startServerProc(t *testing.T, env []string, name string, args ...string) *serverProc {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, stderr: &testutil.SyncBuffer{}, exited: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.stderr.Write([]byte(sc.Text() + "\n"))
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return p
}

// waitLog waits up to limit for want in the process's standard error.
func (p *serverProc) waitLog(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q after %s; stderr:\n%s", want, limit, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits up to limit for the exit.
func (p *serverProc) stop(t *testing.T, limit time.Duration) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		return err
	case <-time.After(limit):
		t.Fatalf("still running %s after SIGTERM; stderr:\n%s", limit, p.stderr.String())
		return nil
	}
}

// consoleServerTOML is quietServerTOML with the HTTP API and the web
// console on a free port.
func consoleServerTOML(data string) string {
	return strings.Replace(quietServerTOML(data, "info"), "[http]\nenabled = false\n",
		"[http]\nenabled = true\naddress = \"127.0.0.1:0\"\nweb_ui = true\n", 1)
}

// The start-up log ends with "iggo server ready", after every
// "listening" line, and the HTTP line carries the console's URL.
func TestServerStartupLogOrderAndConsoleURL(t *testing.T) {
	bin := iggoBinary(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "server.toml")
	writeTestFile(t, cfgPath, consoleServerTOML(filepath.Join(dir, "data")))
	p := startServerProc(t, nil, bin, "server", "--config", cfgPath)
	p.waitLog(t, "iggo server ready", 30*time.Second)
	log := p.stderr.String()
	ready := strings.Index(log, "iggo server ready")
	listening := regexp.MustCompile(`msg="iggo server listening" transport=(\w+)`).FindAllStringSubmatchIndex(log, -1)
	if len(listening) != 2 {
		t.Fatalf("want the tcp and http listening lines:\n%s", log)
	}
	for _, m := range listening {
		if m[0] > ready {
			t.Errorf("%q logged after ready:\n%s", log[m[0]:m[1]], log)
		}
	}
	if !regexp.MustCompile(`transport=http address=127\.0\.0\.1:(\d+) console=http://127\.0\.0\.1:(\d+)/ui/`).MatchString(log) {
		t.Errorf("the http listening line lacks the console URL:\n%s", log)
	}
	if err := p.stop(t, 30*time.Second); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.stderr.String())
	}
}
