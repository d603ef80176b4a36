//go:build !windows

package local

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the node in a process group of its own: a Ctrl-C at
// the terminal reaches the launcher, which stops the nodes in order, not
// every node at once.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// resume continues a stopped (SIGSTOP) process so it can act on SIGTERM.
func (p *Process) resume() { _ = p.Signal(syscall.SIGCONT) }
