package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// parentPollInterval is how often a server started by `go run` checks
// that `go run` is still its parent.
const parentPollInterval = 250 * time.Millisecond

// underGoRun reports whether this process was started by `go run`: the
// parent process is the go command (where the OS tells, parentIsGo), or
// the executable lives in a go-build directory (the temporary or cached
// build of `go run`).
func underGoRun() bool {
	if parentIsGo(os.Getppid()) {
		return true
	}
	exe, err := os.Executable()
	return err == nil && strings.Contains(filepath.ToSlash(exe), "/go-build")
}

// exitWithGoRun returns a context that ends with ctx, or as soon as the
// `go run` process that started this server exits. `go run` does not pass
// SIGTERM on to the program it runs, so without this, `kill <go run pid>`
// would leave the server running as an orphan that holds its ports. A
// server not started by `go run` gets ctx itself: it is never tied to its
// parent (a service manager, a shell that may exit).
func exitWithGoRun(ctx context.Context, logger *slog.Logger) (context.Context, context.CancelFunc) {
	if !watchableParent || !underGoRun() {
		return ctx, func() {}
	}
	ppid := os.Getppid()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// A parent's exit re-parents this process (to init or a
				// subreaper), which changes the parent id.
				if os.Getppid() != ppid {
					logger.Info("go run exited (its SIGTERM is not passed on); shutting down", "go_run_pid", ppid)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}
