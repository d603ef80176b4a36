package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one running `iggo server` node. Its standard output and error
// are appended to the node's log file.
type Process struct {
	// Index is the node's replica id.
	Index int
	cmd   *exec.Cmd
	log   *os.File
	done  chan struct{}
	err   error
}

// PIDPath returns the file Start writes node i's process id to.
func (l *Layout) PIDPath(i int) string { return filepath.Join(l.NodeDir(i), "server.pid") }

// Start runs `bin server --config <node i config> --replica-id i` with the
// root credentials in the environment (plus env, KEY=VALUE entries added
// after the caller's own environment), output appended to the node's log.
// Unless GOMAXPROCS is set (in the environment or env), each node gets
// its share of this machine's CPUs (nodeProcs): the nodes of a local
// cluster share one machine, and each runtime assuming it owns every CPU
// costs them in spinning threads and wake-ups.
//
// args are added after those flags (e.g. "--join" for a node the cluster
// adds back with `iggo cluster add-node`).
func (l *Layout) Start(bin string, i int, env []string, args ...string) (*Process, error) {
	if err := os.MkdirAll(l.NodeDir(i), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", l.NodeDir(i), err)
	}
	log, err := os.OpenFile(l.LogPath(i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open node %d log: %w", i, err)
	}
	args = append([]string{bin, "server", "--config", l.ConfigPath(i), "--replica-id", strconv.Itoa(i)}, args...)
	if i < len(l.Netns) && l.Netns[i] != "" {
		args = append([]string{"ip", "netns", "exec", l.Netns[i]}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "IGGY_ROOT_USERNAME="+RootUsername, "IGGY_ROOT_PASSWORD="+RootPassword)
	if _, set := os.LookupEnv("GOMAXPROCS"); !set && !hasKey(env, "GOMAXPROCS") {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(nodeProcs(runtime.NumCPU(), len(l.Nodes))))
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = log, log
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start node %d: %w", i, err)
	}
	p := &Process{Index: i, cmd: cmd, log: log, done: make(chan struct{})}
	// The PID file lets scripts signal a node (bench/cluster.sh kills the
	// leader with it); it is informational, a failure to write it is not
	// fatal to the node.
	_ = os.WriteFile(l.PIDPath(i), []byte(strconv.Itoa(p.PID())+"\n"), 0o644)
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// PID returns the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err returns how the process ended (nil for exit status 0); only
// meaningful once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Signal sends sig to the process (by its PID). Signalling a process that
// has exited is not an error.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal node %d (pid %d) with %v: %w", p.Index, p.PID(), sig, err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() error {
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM (after SIGCONT, so a stopped process can act on it),
// waits up to grace for the exit, then sends SIGKILL and waits. It returns
// true when the process had to be killed.
func (p *Process) Stop(grace time.Duration) (killed bool, err error) {
	if p.Exited() {
		return false, nil
	}
	p.resume()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return false, nil
	case <-t.C:
	}
	return true, p.Kill()
}

// nodeProcs is each node's GOMAXPROCS when nodes share cpus: an equal
// share, at least one.
func nodeProcs(cpus, nodes int) int {
	if nodes < 1 {
		nodes = 1
	}
	return max(1, cpus/nodes)
}

// hasKey reports whether env (KEY=VALUE entries) sets key.
func hasKey(env []string, key string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, key+"=") {
			return true
		}
	}
	return false
}
