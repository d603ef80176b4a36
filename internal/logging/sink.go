package logging

import (
	"io"
	"log/slog"
	"sync"
	"time"
)

// DefaultReportEvery is how often a failing log file is reported on
// standard error while it keeps failing.
const DefaultReportEvery = time.Minute

// guardedWriter shields the logger from a failing file: a failed write is
// dropped and reported on the standard-error logger at most once per
// interval; the first successful write after failures says so once. It
// always reports success to its caller, so the server keeps serving.
type guardedWriter struct {
	w     io.Writer
	warn  *slog.Logger // standard error only
	now   func() time.Time
	every time.Duration
	path  string

	mu         sync.Mutex
	failing    bool      // guarded by mu
	lastReport time.Time // guarded by mu
	lastRoll   time.Time // guarded by mu: last rotation-failure report
	lost       int       // guarded by mu: records dropped since failing began
}

// Write implements io.Writer.
func (g *guardedWriter) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil && n == len(p) {
		// Written, but the roll before it failed: keep writing to the
		// active file and say so at the same rate.
		if now := g.now(); now.Sub(g.lastRoll) >= g.every {
			g.lastRoll = now
			g.warn.Error("log file rotation failed; writing on to the active file", "path", g.path, "err", err)
		}
		err = nil
	}
	if err != nil {
		g.lost++
		if now := g.now(); !g.failing || now.Sub(g.lastReport) >= g.every {
			g.lastReport = now
			g.warn.Error("log file write failed; the server keeps serving and logs to standard error only until the file is writable again (check free space under system.logging.path)",
				"path", g.path, "lost_records", g.lost, "err", err)
		}
		g.failing = true
		return len(p), nil
	}
	if g.failing {
		g.failing = false
		g.warn.Warn("log file writable again", "path", g.path, "lost_records", g.lost)
		g.lost = 0
	}
	return len(p), nil
}
