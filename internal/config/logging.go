package config

import (
	"fmt"
	"strings"
	"time"
)

// LoggingConfig is [system.logging] (ops.md §4): the level filter, the
// log file under {system.path}/{path} and its rotation and retention.
type LoggingConfig struct {
	// Path is the log directory, relative to system.path unless absolute
	// (default "logs").
	Path string `toml:"path"`
	// Level is the filter: a level (trace, debug, info, warn, error, off)
	// or a directive list such as "warn,server=debug"; see
	// docs/OPERATIONS.md for how targets map to components. The RUST_LOG
	// environment variable, when set, replaces it; SIGHUP re-reads it.
	Level string `toml:"level"`
	// FileEnabled writes a copy of the log to {path}/iggy-server.log.
	FileEnabled bool `toml:"file_enabled"`
	// MaxFileSize rolls the file when it reaches this size, and hourly;
	// 0 keeps one file that never rolls.
	MaxFileSize Size `toml:"max_file_size"`
	// MaxTotalSize bounds the rolled files together (oldest deleted
	// first); 0 means unlimited.
	MaxTotalSize Size `toml:"max_total_size"`
	// RotationCheckInterval is the period of the retention pass.
	RotationCheckInterval Duration `toml:"rotation_check_interval"`
	// Retention deletes rolled files older than this; 0 keeps them.
	Retention Duration `toml:"retention"`
	// Format is "text" (key=value lines) or "json" (one JSON object per
	// line, for log shippers); it applies to standard error and the file.
	// An Iggo extension: the reference has no such key.
	Format string `toml:"format"`
}

// Log formats accepted by system.logging.format.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// LogFileName is the active log file under the log directory.
const LogFileName = "iggy-server.log"

// EnvRustLog is the reference's filter variable; when set it replaces
// system.logging.level, as in the reference.
const EnvRustLog = "RUST_LOG"

// LogOff is the slog level "off" maps to: above every level in use.
const LogOff = 1 << 20

func defaultLogging() LoggingConfig {
	return LoggingConfig{
		Path:                  "logs",
		Level:                 "info",
		FileEnabled:           true,
		MaxFileSize:           Size(500 * 1000 * 1000),
		MaxTotalSize:          Size(4 * 1000 * 1000 * 1000),
		RotationCheckInterval: Duration(time.Hour),
		Retention:             Duration(7 * 24 * time.Hour),
		Format:                LogFormatText,
	}
}

// LogFilter is a parsed system.logging.level: the level of every record
// and per-component overrides, as slog level integers (-4 debug, 0 info,
// 4 warn, 8 error, LogOff).
type LogFilter struct {
	// Level applies to records without an overridden component.
	Level int
	// Components maps a component name (the "component" attribute of a
	// logger) to its level.
	Components map[string]int
}

// serverTargets are directive targets that name the whole server: every
// Iggo record is a server record, so they set the global level.
var serverTargets = map[string]bool{"server": true, "iggy_server": true, "iggy": true, "iggo": true}

// maxLogDirectives bounds the directive list.
const maxLogDirectives = 64

// ParseLogFilter reads the reference's directive syntax where it maps to
// ours: comma-separated elements, each a level ("warn"), a target=level
// pair ("server=debug", "server::tcp=trace") or a bare target (meaning
// trace; only a server target or a path with "::", as a lone word is
// taken for a misspelt level). A target naming the server crate (server, iggy_server, iggy,
// iggo) sets the global level; any other target sets the level of the
// component named by its last "::" segment. Span filters ("[span]") and
// regular expressions are refused. Later elements win. UNKNOWN in the
// reference: how targets of other crates would map; here they name
// components nothing logs under, so they have no effect.
func ParseLogFilter(s string) (LogFilter, error) {
	f := LogFilter{Level: LogLevels["info"]}
	parts := strings.Split(s, ",")
	if len(parts) > maxLogDirectives {
		return f, fmt.Errorf("more than %d directives", maxLogDirectives)
	}
	seenLevel := false
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if strings.ContainsAny(p, "[]{}/ ") {
			return f, fmt.Errorf("%q: span and regular-expression filters are not supported", p)
		}
		target, level, hasLevel := strings.Cut(p, "=")
		if !hasLevel {
			if lv, ok := parseLevelName(p); ok {
				f.Level, seenLevel = lv, true
				continue
			}
			// A bare target means trace in the reference; a lone word is
			// more likely a misspelt level, so only targets that are
			// clearly targets are taken.
			if !serverTargets[strings.ToLower(p)] && !strings.Contains(p, "::") {
				return f, fmt.Errorf("%q is neither a level (trace, debug, info, warn, error, off) nor target=level", p)
			}
			target, level = p, "trace"
		}
		lv, ok := parseLevelName(level)
		if !ok {
			return f, fmt.Errorf("%q: %q is not one of trace, debug, info, warn, error, off", p, level)
		}
		target = strings.ToLower(strings.TrimSpace(target))
		if target == "" {
			return f, fmt.Errorf("%q: empty target", p)
		}
		if serverTargets[target] {
			f.Level, seenLevel = lv, true
			continue
		}
		if i := strings.LastIndex(target, "::"); i >= 0 {
			target = target[i+2:]
		}
		if f.Components == nil {
			f.Components = map[string]int{}
		}
		f.Components[target] = lv
	}
	if !seenLevel && len(f.Components) == 0 {
		return f, fmt.Errorf("%q names no level", s)
	}
	return f, nil
}

func parseLevelName(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "off" {
		return LogOff, true
	}
	lv, ok := LogLevels[s]
	return lv, ok
}

// EffectiveLogLevel returns the filter text in force: RUST_LOG from
// environ when set and non-empty, else system.logging.level.
func (l LoggingConfig) EffectiveLogLevel(environ []string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == EnvRustLog && strings.TrimSpace(v) != "" {
			return v
		}
	}
	return l.Level
}

// validateLogging checks [system.logging].
func (c *Config) validateLogging() []error {
	var errs []error
	l := &c.System.Logging
	if _, err := ParseLogFilter(l.Level); err != nil {
		errs = append(errs, fmt.Errorf("system.logging.level: %w", err))
	}
	if l.FileEnabled && strings.TrimSpace(l.Path) == "" {
		errs = append(errs, fmt.Errorf("system.logging.path: must not be empty when file_enabled is true"))
	}
	if l.RotationCheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("system.logging.rotation_check_interval: must be positive"))
	}
	if l.Retention < 0 {
		errs = append(errs, fmt.Errorf("system.logging.retention: must not be negative"))
	}
	switch l.Format {
	case LogFormatText, LogFormatJSON:
	default:
		errs = append(errs, fmt.Errorf("system.logging.format: %q is not one of text, json", l.Format))
	}
	return errs
}
