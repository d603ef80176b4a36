//go:build !unix

package cli

// watchableParent is false where a process is not re-parented when its
// parent exits (Windows): the parent id would not tell.
const watchableParent = false

// parentIsGo is not consulted where the parent cannot be watched.
func parentIsGo(int) bool { return false }
