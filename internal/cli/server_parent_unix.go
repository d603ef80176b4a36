//go:build unix && !linux

package cli

// watchableParent: a process whose parent exits is re-parented, so the
// parent id tells.
const watchableParent = true

// parentIsGo cannot look at another process without /proc; underGoRun
// falls back to where the executable lives.
func parentIsGo(int) bool { return false }
