package config

import (
	"strings"
	"testing"
)

func TestParseLogFilter(t *testing.T) {
	cases := []struct {
		in    string
		level int
		comps map[string]int
		err   string
	}{
		{in: "info", level: 0},
		{in: "WARN", level: 4},
		{in: "trace", level: -4},
		{in: "off", level: LogOff},
		{in: "warn,server=debug", level: -4},
		{in: "error,iggy_server=info", level: 0},
		{in: "warn,server::tcp=debug,quic=error", level: 4, comps: map[string]int{"tcp": -4, "quic": 8}},
		{in: "info,iggy_server::http", level: 0, comps: map[string]int{"http": -4}},
		{in: "tokio=warn", level: 0, comps: map[string]int{"tokio": 4}},
		{in: " debug , ", level: -4},
		{in: "loud", err: "neither a level"},
		{in: "iggy_server", level: -4},
		{in: "warn,iggy_server::tcp", level: 4, comps: map[string]int{"tcp": -4}},
		{in: "", err: "names no level"},
		{in: "server=loud", err: "not one of"},
		{in: "=debug", err: "empty target"},
		{in: "info,[span{a=1}]=debug", err: "not supported"},
		{in: "info,foo=debug/bar", err: "not supported"},
		{in: strings.Repeat("info,", 65), err: "more than"},
	}
	for _, c := range cases {
		f, err := ParseLogFilter(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseLogFilter(%q) error = %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLogFilter(%q): %v", c.in, err)
			continue
		}
		if f.Level != c.level {
			t.Errorf("ParseLogFilter(%q).Level = %d, want %d", c.in, f.Level, c.level)
		}
		if len(f.Components) != len(c.comps) {
			t.Errorf("ParseLogFilter(%q).Components = %v, want %v", c.in, f.Components, c.comps)
		}
		for k, v := range c.comps {
			if f.Components[k] != v {
				t.Errorf("ParseLogFilter(%q).Components[%s] = %d, want %d", c.in, k, f.Components[k], v)
			}
		}
	}
}

func TestLoggingDefaultsAndValidation(t *testing.T) {
	c := Default()
	l := c.System.Logging
	if l.Path != "logs" || l.Level != "info" || !l.FileEnabled || l.MaxFileSize != 500_000_000 ||
		l.MaxTotalSize != 4_000_000_000 || l.RotationCheckInterval.Std().Hours() != 1 ||
		l.Retention.Std().Hours() != 7*24 || l.Format != LogFormatText {
		t.Fatalf("logging defaults = %+v", l)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	bad := []struct {
		mut func(*LoggingConfig)
		key string
	}{
		{func(l *LoggingConfig) { l.Format = "xml" }, "system.logging.format"},
		{func(l *LoggingConfig) { l.RotationCheckInterval = 0 }, "system.logging.rotation_check_interval"},
		{func(l *LoggingConfig) { l.Retention = -1 }, "system.logging.retention"},
		{func(l *LoggingConfig) { l.Path = " " }, "system.logging.path"},
		{func(l *LoggingConfig) { l.Level = "warn,server=shouty" }, "system.logging.level"},
	}
	for _, b := range bad {
		c := Default()
		b.mut(&c.System.Logging)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), b.key) {
			t.Errorf("Validate() = %v, want an error naming %s", err, b.key)
		}
	}
	c = Default()
	c.System.Logging.Path, c.System.Logging.FileEnabled = "", false
	if err := c.Validate(); err != nil {
		t.Errorf("empty path with the file off: %v", err)
	}
}

func TestLoggingKeysFromTOMLAndEnv(t *testing.T) {
	c, notices, err := Parse([]byte(`[system.logging]
path = "lg"
level = "warn,server=debug"
file_enabled = false
max_file_size = "10 MB"
max_total_size = "1 GB"
rotation_check_interval = "5 m"
retention = "2 days"
format = "json"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notices {
		t.Errorf("notice: %s", n.Message)
	}
	l := c.System.Logging
	if l.Path != "lg" || l.FileEnabled || l.MaxFileSize != 10_000_000 || l.MaxTotalSize != 1_000_000_000 ||
		l.RotationCheckInterval.Std().Minutes() != 5 || l.Retention.Std().Hours() != 48 || l.Format != "json" {
		t.Fatalf("parsed %+v", l)
	}
	c, _, err = Load("", []string{"IGGY_SYSTEM_LOGGING_MAX_FILE_SIZE=1 KB", "IGGY_SYSTEM_LOGGING_FORMAT=json"})
	if err != nil {
		t.Fatal(err)
	}
	if c.System.Logging.MaxFileSize != 1000 || c.System.Logging.Format != "json" {
		t.Fatalf("env overlay: %+v", c.System.Logging)
	}
	l = Default().System.Logging
	if got := l.EffectiveLogLevel([]string{"RUST_LOG=debug"}); got != "debug" {
		t.Errorf("RUST_LOG ignored: %q", got)
	}
	if got := l.EffectiveLogLevel([]string{"RUST_LOG= "}); got != "info" {
		t.Errorf("blank RUST_LOG used: %q", got)
	}
}
