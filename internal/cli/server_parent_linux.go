package cli

import (
	"os"
	"path/filepath"
	"strconv"
)

// watchableParent: a process whose parent exits is re-parented, so the
// parent id tells.
const watchableParent = true

// parentIsGo reports whether process ppid runs the go command.
func parentIsGo(ppid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(ppid) + "/exe")
	return err == nil && filepath.Base(exe) == "go"
}
