// Package logging sets up the server's slog logger from system.logging
// (ops.md §4): standard error always, a rolling file under
// {system.path}/{system.logging.path} when file_enabled, extra handlers
// (such as an OpenTelemetry log bridge) fanned out alongside, and one
// level filter in front of them all that accepts the reference's
// directive syntax and can be replaced while serving (SIGHUP).
//
// Chosen where the reference says nothing (UNKNOWN there): a log
// directory that cannot be created or opened is reported once on
// standard error, naming system.logging.path, and the server keeps
// serving with standard error only (under systemd or a container
// runtime standard error is collected anyway); a log file whose writes
// fail (a full disk) is reported at most once per minute and used again
// as soon as writes succeed.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
)

// Options is what New needs.
type Options struct {
	// Config is system.logging.
	Config config.LoggingConfig
	// DataPath is system.path; a relative Config.Path is under it.
	DataPath string
	// Environ is searched for RUST_LOG, which replaces Config.Level.
	Environ []string
	// Stderr is the standard error sink.
	Stderr io.Writer
	// Extra handlers receive every record that passes the level filter,
	// next to standard error and the file.
	Extra []slog.Handler
	// Now is the clock of rotation, retention and failure reports
	// (time.Now when nil).
	Now func() time.Time
	// ReportEvery is the interval between reports of a failing log file
	// (DefaultReportEvery when zero).
	ReportEvery time.Duration
}

// Logging is the configured logger with its file and level filter.
type Logging struct {
	logger   *slog.Logger
	stderr   *slog.Logger
	levels   *Levels
	file     *File // nil when file logging is off or failed to open
	interval time.Duration
	sinks    []slog.Handler // standard error and the file
}

// New builds the logger. It fails only on a level filter that does not
// parse; a log file that cannot be opened is reported and skipped.
func New(o Options) (*Logging, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReportEvery <= 0 {
		o.ReportEvery = DefaultReportEvery
	}
	format := o.Config.Format
	stderrH := newSinkHandler(format, o.Stderr)
	l := &Logging{stderr: slog.New(stderrH), interval: o.Config.RotationCheckInterval.Std()}

	text := o.Config.EffectiveLogLevel(o.Environ)
	f, err := config.ParseLogFilter(text)
	if err != nil && text != o.Config.Level {
		l.stderr.Warn("RUST_LOG is not a usable filter; using system.logging.level", "RUST_LOG", text, "err", err)
		text = o.Config.Level
		f, err = config.ParseLogFilter(text)
	}
	if err != nil {
		return nil, fmt.Errorf("system.logging.level: %w", err)
	}
	l.levels = newLevels(text, f)

	sinks := []slog.Handler{stderrH}
	if o.Config.FileEnabled {
		dir := LogDir(o.DataPath, o.Config.Path)
		lf, err := OpenFile(FileConfig{
			Dir:          dir,
			Name:         config.LogFileName,
			MaxFileSize:  int64(o.Config.MaxFileSize),
			MaxTotalSize: int64(o.Config.MaxTotalSize),
			Retention:    o.Config.Retention.Std(),
			Now:          o.Now,
		})
		if err != nil {
			l.stderr.Error("log file disabled: system.logging.path is not writable; logging to standard error only (fix the directory's permissions, or set system.logging.file_enabled = false)",
				"path", dir, "err", err)
		} else {
			l.file = lf
			g := &guardedWriter{w: lf, warn: l.stderr, now: o.Now, every: o.ReportEvery, path: lf.Path()}
			sinks = append(sinks, newSinkHandler(format, g))
		}
	}
	l.sinks = sinks
	l.logger = l.WithExtra(o.Extra...)
	return l, nil
}

// WithExtra returns a logger writing what the level filter passes to
// standard error, the file and hs. Logger is WithExtra(Options.Extra...);
// a handler built after New (an exporter that logs its own errors to
// Logger) is added this way, and the result used as the server logger.
func (l *Logging) WithExtra(hs ...slog.Handler) *slog.Logger {
	all := append(append([]slog.Handler(nil), l.sinks...), hs...)
	var next slog.Handler = all[0]
	if len(all) > 1 {
		next = slog.NewMultiHandler(all...)
	}
	return slog.New(&filterHandler{next: next, levels: l.levels})
}

// LogDir resolves system.logging.path against system.path.
func LogDir(dataPath, logPath string) string {
	if filepath.IsAbs(logPath) {
		return logPath
	}
	return filepath.Join(dataPath, logPath)
}

func newSinkHandler(format string, w io.Writer) slog.Handler {
	opts := &slog.HandlerOptions{Level: levelAll}
	if format == config.LogFormatJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// Logger is the server logger.
func (l *Logging) Logger() *slog.Logger { return l.logger }

// Levels is the filter in force (a slog.Leveler of the global level).
func (l *Logging) Levels() *Levels { return l.levels }

// Filter is the filter text in force.
func (l *Logging) Filter() string { return l.levels.Text() }

// FilePath is the active log file, "" when there is none.
func (l *Logging) FilePath() string {
	if l.file == nil {
		return ""
	}
	return l.file.Path()
}

// SetFilter parses text and, when it is valid, makes it the filter of
// every record logged afterwards. It returns the previous text.
func (l *Logging) SetFilter(text string) (string, error) {
	old := l.levels.Text()
	f, err := config.ParseLogFilter(text)
	if err != nil {
		return old, fmt.Errorf("system.logging.level: %w", err)
	}
	l.levels.Set(text, f)
	return old, nil
}

// Run deletes expired rolled files every rotation_check_interval until
// ctx ends. It returns at once when there is no log file.
func (l *Logging) Run(ctx context.Context) {
	if l.file == nil || l.interval <= 0 {
		return
	}
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := l.file.Sweep(); err != nil {
				l.stderr.Warn("log retention pass failed", "err", err)
			}
		}
	}
}

// Close closes the log file.
func (l *Logging) Close() error {
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}
