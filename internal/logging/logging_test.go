package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/testutil"
)

func stderrOnly(level string) config.LoggingConfig {
	c := config.Default().System.Logging
	c.Level, c.FileEnabled = level, false
	return c
}

func TestComponentLevelsAndRuntimeChange(t *testing.T) {
	var out testutil.SyncBuffer
	l, err := New(Options{Config: stderrOnly("warn,server::tcp=debug"), Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	log := l.Logger()
	tcp := log.With(ComponentKey, "tcp")
	quic := log.With(ComponentKey, "quic")
	log.Info("global-info")
	log.Warn("global-warn")
	tcp.Debug("tcp-debug")
	quic.Info("quic-info")
	tcp.WithGroup("g").Debug("tcp-group-debug")
	s := out.String()
	for _, want := range []string{"global-warn", "tcp-debug", "tcp-group-debug"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	for _, gone := range []string{"global-info", "quic-info"} {
		if strings.Contains(s, gone) {
			t.Errorf("%q passed the filter:\n%s", gone, s)
		}
	}
	if l.Levels().Level() != slog.LevelWarn {
		t.Errorf("Level() = %v", l.Levels().Level())
	}

	old, err := l.SetFilter("debug")
	if err != nil || old != "warn,server::tcp=debug" {
		t.Fatalf("SetFilter = %q, %v", old, err)
	}
	log.Debug("after-change")
	quic.Debug("quic-after-change")
	if _, err := l.SetFilter("shouty"); err == nil || !strings.Contains(err.Error(), "system.logging.level") {
		t.Fatalf("bad filter accepted: %v", err)
	}
	if l.Filter() != "debug" {
		t.Fatalf("a bad filter replaced the good one: %q", l.Filter())
	}
	log.Debug("still-debug")
	s = out.String()
	for _, want := range []string{"after-change", "quic-after-change", "still-debug"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q after SetFilter", want)
		}
	}
}

func TestRustLogWinsAndBadRustLogFallsBack(t *testing.T) {
	var out testutil.SyncBuffer
	l, err := New(Options{Config: stderrOnly("error"), Environ: []string{"RUST_LOG=debug"}, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	l.Logger().Debug("rust-log-debug")
	if !strings.Contains(out.String(), "rust-log-debug") || l.Filter() != "debug" {
		t.Fatalf("RUST_LOG not applied: %q\n%s", l.Filter(), out.String())
	}
	out = testutil.SyncBuffer{}
	l, err = New(Options{Config: stderrOnly("error"), Environ: []string{"RUST_LOG=[x]=y"}, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if l.Filter() != "error" || !strings.Contains(out.String(), "RUST_LOG is not a usable filter") {
		t.Fatalf("bad RUST_LOG: filter %q, output\n%s", l.Filter(), out.String())
	}
	if _, err := New(Options{Config: stderrOnly("nope"), Stderr: &out}); err == nil {
		t.Fatal("an invalid level was accepted")
	}
}

func TestFileSinkJSONAndExtraHandler(t *testing.T) {
	data := t.TempDir()
	var out testutil.SyncBuffer
	var extra testutil.SyncBuffer
	c := config.Default().System.Logging
	c.Format = config.LogFormatJSON
	l, err := New(Options{Config: c, DataPath: data, Stderr: &out,
		Extra: []slog.Handler{slog.NewTextHandler(&extra, &slog.HandlerOptions{Level: slog.LevelDebug})}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := filepath.Join(data, "logs", "iggy-server.log")
	if l.FilePath() != want {
		t.Fatalf("FilePath = %q, want %q", l.FilePath(), want)
	}
	l.Logger().With(ComponentKey, "tcp").Info("hello", "n", 7)
	l.Logger().Debug("below-info")
	file, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"file": string(file), "stderr": out.String()} {
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if len(lines) != 1 {
			t.Fatalf("%s has %d lines: %q", name, len(lines), text)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
			t.Fatalf("%s line is not JSON: %v: %q", name, err, lines[0])
		}
		if rec["msg"] != "hello" || rec["component"] != "tcp" || rec["n"] != float64(7) || rec["level"] != "INFO" {
			t.Fatalf("%s record = %v", name, rec)
		}
	}
	if !strings.Contains(extra.String(), "msg=hello") || strings.Contains(extra.String(), "below-info") {
		t.Fatalf("extra handler got %q", extra.String())
	}

	// A handler added afterwards gets records of the new logger only,
	// through the same filter.
	var late testutil.SyncBuffer
	withLate := l.WithExtra(slog.NewTextHandler(&late, nil))
	withLate.Info("to-late")
	withLate.Debug("late-below-info")
	l.Logger().Info("not-to-late")
	if !strings.Contains(late.String(), "to-late") || strings.Contains(late.String(), "below-info") || strings.Contains(late.String(), "not-to-late") {
		t.Fatalf("late handler got %q", late.String())
	}
	if !strings.Contains(out.String(), "to-late") {
		t.Fatalf("WithExtra logger does not write standard error: %q", out.String())
	}
}

func TestAbsoluteLogPath(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "elsewhere")
	if got := LogDir("local_data", abs); got != abs {
		t.Fatalf("LogDir(abs) = %q", got)
	}
	if got := LogDir("local_data", "logs"); got != filepath.Join("local_data", "logs") {
		t.Fatalf("LogDir(rel) = %q", got)
	}
}

// An unwritable log directory: one clear line naming the key, then
// standard error only.
func TestUnwritableLogDirectory(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(notDir, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{
		"parent is a file":    notDir,       // logs would be plain-file/logs
		"read-only directory": "/proc/self", // read-only even for root
	}
	for name, dataPath := range dirs {
		t.Run(name, func(t *testing.T) {
			var out testutil.SyncBuffer
			c := config.Default().System.Logging
			l, err := New(Options{Config: c, DataPath: dataPath, Stderr: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.FilePath() != "" {
				t.Fatalf("a log file was opened at %s", l.FilePath())
			}
			l.Logger().Info("served-anyway")
			s := out.String()
			if strings.Count(s, "system.logging.path") != 1 || !strings.Contains(s, "standard error only") {
				t.Fatalf("want one line naming system.logging.path, got\n%s", s)
			}
			if !strings.Contains(s, "served-anyway") {
				t.Fatalf("logging stopped:\n%s", s)
			}
		})
	}
}

// flakyWriter fails while full is set, like a file on a full disk.
type flakyWriter struct {
	mu   sync.Mutex
	full bool
	got  bytes.Buffer
}

func (w *flakyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full {
		return 0, errors.New("no space left on device")
	}
	return w.got.Write(p)
}

func (w *flakyWriter) setFull(b bool) {
	w.mu.Lock()
	w.full = b
	w.mu.Unlock()
}

func TestFailingWriterReportedOncePerMinute(t *testing.T) {
	var stderr testutil.SyncBuffer
	clk := newClock()
	w := &flakyWriter{}
	g := &guardedWriter{w: w, warn: slog.New(slog.NewTextHandler(&stderr, nil)), now: clk.Now, every: time.Minute, path: "x.log"}
	log := slog.New(slog.NewTextHandler(g, nil))
	log.Info("one")
	w.setFull(true)
	for range 10 {
		log.Info("lost")
		clk.Add(5 * time.Second)
	}
	if n := strings.Count(stderr.String(), "log file write failed"); n != 1 {
		t.Fatalf("%d failure reports within 50 s, want 1:\n%s", n, stderr.String())
	}
	clk.Add(15 * time.Second) // 65 s after the first report
	log.Info("lost")
	if n := strings.Count(stderr.String(), "log file write failed"); n != 2 {
		t.Fatalf("%d failure reports after a minute, want 2:\n%s", n, stderr.String())
	}
	if !strings.Contains(stderr.String(), "lost_records=11") {
		t.Errorf("lost count missing:\n%s", stderr.String())
	}
	w.setFull(false)
	log.Info("back")
	log.Info("again")
	if n := strings.Count(stderr.String(), "log file writable again"); n != 1 {
		t.Fatalf("%d recovery lines, want 1:\n%s", n, stderr.String())
	}
	got := w.got.String()
	if !strings.Contains(got, "msg=one") || !strings.Contains(got, "msg=back") || !strings.Contains(got, "msg=again") || strings.Contains(got, "msg=lost") {
		t.Fatalf("file content:\n%s", got)
	}
}

// A real full device: the active log file is /dev/full, whose writes
// fail with ENOSPC.
func TestDiskFullDevice(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	data := t.TempDir()
	logs := filepath.Join(data, "logs")
	os.MkdirAll(logs, 0o750)
	if err := os.Symlink("/dev/full", filepath.Join(logs, "iggy-server.log")); err != nil {
		t.Fatal(err)
	}
	var out testutil.SyncBuffer
	l, err := New(Options{Config: config.Default().System.Logging, DataPath: data, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 5 {
		l.Logger().Info("keeps-serving")
	}
	s := out.String()
	if strings.Count(s, "log file write failed") != 1 || !strings.Contains(s, "no space left on device") {
		t.Fatalf("want one ENOSPC report:\n%s", s)
	}
	if strings.Count(s, "keeps-serving") != 5 {
		t.Fatalf("standard error lost records:\n%s", s)
	}
}

func TestRunSweepsUntilCancelled(t *testing.T) {
	data := t.TempDir()
	c := config.Default().System.Logging
	c.RotationCheckInterval = config.Duration(10 * time.Millisecond)
	c.Retention = config.Duration(time.Hour)
	var out testutil.SyncBuffer
	l, err := New(Options{Config: c, DataPath: data, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stale := filepath.Join(data, "logs", "iggy-server.log.20200101T000000.000000000Z")
	os.WriteFile(stale, []byte("old"), 0o640)
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, past, past)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(stale); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("retention loop did not delete the expired file")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// rollFailWriter writes everything but reports a failed roll.
type rollFailWriter struct{ got testutil.SyncBuffer }

func (w *rollFailWriter) Write(p []byte) (int, error) {
	w.got.Write(p)
	return len(p), errors.New("roll log file: rename: read-only file system")
}

func TestFailedRollIsNotALostRecord(t *testing.T) {
	var stderr testutil.SyncBuffer
	clk := newClock()
	w := &rollFailWriter{}
	g := &guardedWriter{w: w, warn: slog.New(slog.NewTextHandler(&stderr, nil)), now: clk.Now, every: time.Minute, path: "x.log"}
	log := slog.New(slog.NewTextHandler(g, nil))
	for range 3 {
		log.Info("kept")
	}
	s := stderr.String()
	if strings.Count(s, "log file rotation failed") != 1 || strings.Contains(s, "write failed") {
		t.Fatalf("reports:\n%s", s)
	}
	if strings.Count(w.got.String(), "msg=kept") != 3 {
		t.Fatalf("records lost: %q", w.got.String())
	}
}
