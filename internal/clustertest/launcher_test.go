//go:build !windows

package clustertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
)

// launcherPorts returns a base port whose ports base+i, base+100+i
// (i < n) are free on 127.0.0.1 just now.
func launcherPorts(t *testing.T, n int) uint16 {
	t.Helper()
	for range 200 {
		base := 20000 + rand.IntN(11000)
		ok := true
		for _, off := range []int{0, 100} {
			for i := range n {
				ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+off+i))
				if err != nil {
					ok = false
					break
				}
				ln.Close()
			}
		}
		if ok {
			return uint16(base)
		}
	}
	t.Fatal("no free range of ports for the launcher")
	return 0
}

// TestClusterStartCommand runs `iggo cluster start` as a user would: it
// starts three nodes, reports replica 0 as the leader of the fresh
// cluster with the connect hint, `iggo cluster status` agrees, a client
// can use the printed address, a killed node is reported with the way
// back and `iggo cluster restart-node` brings it back, and SIGTERM to the
// launcher stops every node (by the PIDs it recorded).
func TestClusterStartCommand(t *testing.T) {
	requireBinary(t)
	dir := t.TempDir()
	base := launcherPorts(t, 3)
	cmd := exec.Command(iggoBin, "cluster", "start", "--dir", dir, "--base-port", strconv.Itoa(int(base)), "--wait", "60s")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		// Never leave nodes behind, whatever happened to the launcher.
		for i := range 3 {
			if pid := readPID(t, dir, i); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	timeout := time.After(90 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("launcher exited before the cluster was ready: %v\nstdout:\n%s\nstderr:\n%s", cmd.Wait(), strings.Join(got, "\n"), stderr.String())
			}
			got = append(got, l)
			if strings.HasPrefix(l, "Ctrl-C") {
				break wait
			}
		case <-timeout:
			t.Fatalf("cluster not ready after 90 s; stdout:\n%s", strings.Join(got, "\n"))
		}
	}
	text := strings.Join(got, "\n")
	addr0 := "127.0.0.1:" + strconv.Itoa(int(base))
	for _, want := range []string{
		"node0    " + addr0,
		"connect:  iggo --addr " + addr0 + " ping",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("launcher output lacks %q:\n%s", want, text)
		}
	}
	for _, l := range got {
		if strings.HasPrefix(l, "node0 ") && !strings.HasSuffix(l, "leader") {
			t.Errorf("fresh cluster: node0 is not the leader: %q", l)
		}
	}

	st, err := exec.Command(iggoBin, "cluster", "status", "--dir", dir, "-o", "json").Output()
	if err != nil {
		t.Fatalf("iggo cluster status: %v", err)
	}
	var status struct {
		Leader string
		Nodes  []struct {
			Name, Address, Role string
			Up                  bool
		}
	}
	if err := json.Unmarshal(st, &status); err != nil {
		t.Fatalf("status output %s: %v", st, err)
	}
	if status.Leader != "node0" || len(status.Nodes) != 3 {
		t.Errorf("status: %s", st)
	}
	for i, n := range status.Nodes {
		if !n.Up || n.Address != "127.0.0.1:"+strconv.Itoa(int(base)+i) {
			t.Errorf("status node %d: %+v", i, n)
		}
	}
	if ping, err := exec.Command(iggoBin, "--addr", addr0, "ping").CombinedOutput(); err != nil {
		t.Errorf("iggo --addr %s ping: %v\n%s", addr0, err, ping)
	}

	restartKilledNode(t, dir, lines)

	pids := make([]int, 3)
	for i := range pids {
		if pids[i] = readPID(t, dir, i); pids[i] <= 0 {
			t.Fatalf("no pid file for node %d", i)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("launcher after SIGTERM: %v (stderr %s)", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("launcher still running 30 s after SIGTERM")
	}
	for i, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("node %d (pid %d) still running after the launcher stopped", i, pid)
		}
	}
}

// readPID returns the PID recorded for node i in a launcher directory, or
// 0.
func readPID(t *testing.T, dir string, i int) int {
	l := local.Layout{Dir: dir}
	f, err := os.Open(l.PIDPath(i))
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// restartKilledNode kills node 2 of the launcher's cluster in dir, waits
// for the launcher (whose stdout lines arrive on lines) to report it with
// the restart hint, runs `iggo cluster restart-node 2` until the node is
// back and sees the leader, then stops it with SIGTERM to restart-node,
// which must stop the node too.
func restartKilledNode(t *testing.T, dir string, lines <-chan string) {
	t.Helper()
	pid := readPID(t, dir, 2)
	if pid <= 0 {
		t.Fatal("no pid file for node 2")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	hint := "iggo cluster restart-node 2 --dir " + dir
	deadline := time.After(30 * time.Second)
	for seen := false; !seen; {
		select {
		case l := <-lines:
			seen = strings.Contains(l, hint)
		case <-deadline:
			t.Fatalf("launcher did not report the killed node with %q", hint)
		}
	}
	rn := exec.Command(iggoBin, "cluster", "restart-node", "2", "--dir", dir, "--wait", "60s")
	out, err := rn.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	rn.Stderr = &stderr
	if err := rn.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if rn.ProcessState == nil {
			_ = rn.Process.Kill()
			_ = rn.Wait()
		}
	}()
	back := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "back in the cluster; leader node0") {
				ok = true
				back <- true
			}
		}
		if !ok {
			back <- false
		}
	}()
	select {
	case ok := <-back:
		if !ok {
			t.Fatalf("restart-node ended without the node back: %v\n%s", rn.Wait(), stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatal("node 2 not back after 90 s")
	}
	newPID := readPID(t, dir, 2)
	if newPID <= 0 || newPID == pid {
		t.Fatalf("node 2 pid %d after restart (was %d)", newPID, pid)
	}
	if r, err := exec.Command(iggoBin, "cluster", "status", "--dir", dir).CombinedOutput(); err != nil {
		t.Errorf("status after restart-node: %v\n%s", err, r)
	}
	again := exec.Command(iggoBin, "cluster", "restart-node", "2", "--dir", dir)
	if r, err := again.CombinedOutput(); err == nil || !strings.Contains(string(r), "node2 is running") {
		t.Errorf("restart-node of a running node: %v\n%s", err, r)
	}
	if err := rn.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := rn.Wait(); err != nil {
		t.Errorf("restart-node after SIGTERM: %v\n%s", err, stderr.String())
	}
	if err := syscall.Kill(newPID, 0); err == nil {
		t.Errorf("node 2 (pid %d) still running after restart-node stopped", newPID)
	}
}
