package replication

import (
	"context"
	"fmt"
	"log/slog"
)

// raftLogger adapts raft's Logger to slog. raft logs every election at
// Info; with thousands of groups that is noise, so Info becomes Debug.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) out(level slog.Level, msg string) {
	if r.l.Enabled(context.Background(), level) {
		r.l.Log(context.Background(), level, msg)
	}
}

func (r raftLogger) Debug(v ...any) { r.out(slog.LevelDebug, fmt.Sprint(v...)) }
func (r raftLogger) Debugf(format string, v ...any) {
	r.out(slog.LevelDebug, fmt.Sprintf(format, v...))
}
func (r raftLogger) Info(v ...any)                 { r.out(slog.LevelDebug, fmt.Sprint(v...)) }
func (r raftLogger) Infof(format string, v ...any) { r.out(slog.LevelDebug, fmt.Sprintf(format, v...)) }
func (r raftLogger) Warning(v ...any)              { r.out(slog.LevelWarn, fmt.Sprint(v...)) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.out(slog.LevelWarn, fmt.Sprintf(format, v...))
}
func (r raftLogger) Error(v ...any) { r.out(slog.LevelError, fmt.Sprint(v...)) }
func (r raftLogger) Errorf(format string, v ...any) {
	r.out(slog.LevelError, fmt.Sprintf(format, v...))
}

// Fatal and Panic are raft invariant failures: they panic, which the
// host's owner treats as a crash of the node.
func (r raftLogger) Fatal(v ...any) { r.Panic(v...) }
func (r raftLogger) Fatalf(format string, v ...any) {
	r.Panicf(format, v...)
}
func (r raftLogger) Panic(v ...any) {
	s := fmt.Sprint(v...)
	r.out(slog.LevelError, s)
	panic(s)
}
func (r raftLogger) Panicf(format string, v ...any) {
	s := fmt.Sprintf(format, v...)
	r.out(slog.LevelError, s)
	panic(s)
}
