package local

import "os/exec"

// ownProcessGroup does nothing on Windows: console signals are not
// forwarded to the nodes the way a Unix terminal's are.
func ownProcessGroup(*exec.Cmd) {}

// resume does nothing on Windows (processes are not stopped by signal).
func (p *Process) resume() {}
