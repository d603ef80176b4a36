package logging

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/iggo-dev/iggo/internal/config"
)

// ComponentKey is the logger attribute the per-component level overrides
// of system.logging.level match: a logger made with
// logger.With(logging.ComponentKey, "tcp") is filtered by "server::tcp=debug"
// or "tcp=debug". Records without it use the global level.
const ComponentKey = "component"

// levelAll lets every record through a sink handler; the filter handler
// in front of the sinks decides.
const levelAll = slog.Level(-1 << 20)

// Levels is the level filter in force, replaceable at run time. It is a
// slog.Leveler reporting the global level.
type Levels struct {
	p atomic.Pointer[levelState]
}

// levelState is one published filter with the text it was parsed from.
type levelState struct {
	text string
	f    config.LogFilter
}

func newLevels(text string, f config.LogFilter) *Levels {
	l := &Levels{}
	l.Set(text, f)
	return l
}

// Set replaces the filter (parsed from text); records logged afterwards
// use it.
func (l *Levels) Set(text string, f config.LogFilter) { l.p.Store(&levelState{text: text, f: f}) }

// Text is the filter text in force.
func (l *Levels) Text() string { return l.p.Load().text }

// Level is the global level (slog.Leveler).
func (l *Levels) Level() slog.Level { return slog.Level(l.p.Load().f.Level) }

// min returns the lowest level a record of component passes at.
func (l *Levels) min(component string) slog.Level {
	f := &l.p.Load().f
	if component != "" {
		if lv, ok := f.Components[component]; ok {
			return slog.Level(lv)
		}
	}
	return slog.Level(f.Level)
}

// filterHandler drops records below the level of its logger's component
// before they reach the sinks.
type filterHandler struct {
	next      slog.Handler
	levels    *Levels
	component string
}

// Enabled implements slog.Handler.
func (h *filterHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.levels.min(h.component) && h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *filterHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; a ComponentKey attribute selects the
// component level.
func (h *filterHandler) WithAttrs(as []slog.Attr) slog.Handler {
	comp := h.component
	for _, a := range as {
		if a.Key == ComponentKey {
			comp = a.Value.String()
		}
	}
	return &filterHandler{next: h.next.WithAttrs(as), levels: h.levels, component: comp}
}

// WithGroup implements slog.Handler.
func (h *filterHandler) WithGroup(name string) slog.Handler {
	return &filterHandler{next: h.next.WithGroup(name), levels: h.levels, component: h.component}
}
