package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/config"
)

// examplePath is the generated example configuration.
var examplePath = filepath.Join("..", "..", "..", "deploy", "config.toml")

// The shipped example equals what the schema generates now.
func TestExampleIsCurrent(t *testing.T) {
	want, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatalf("%v (run go generate ./internal/config)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("deploy/config.toml is stale at line %d:\n  file:   %q\n  schema: %q\nrun go generate ./internal/config", i+1, g, w)
			}
		}
	}
}

// The example parses back to exactly the defaults, names every key of
// the schema, and has a comment for every key.
func TestExampleEqualsDefaults(t *testing.T) {
	data, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	cfg, notices, err := config.Parse(data)
	if err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	for _, n := range notices {
		if strings.HasPrefix(n.Message, "unknown config key") {
			t.Errorf("the example has a key outside the schema: %s", n.Message)
		}
	}
	if def := config.Default(); !reflect.DeepEqual(cfg, def) {
		t.Fatalf("the example parses to\n%+v\nwant the defaults\n%+v", cfg, def)
	}
	text := string(data)
	for _, k := range config.Keys() {
		if !strings.Contains(text, "# Env: "+config.EnvName(k)+"\n") && !strings.Contains(text, "[["+k+"]]") {
			t.Errorf("key %s is missing from the example", k)
		}
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if strings.Contains(line, " = ") && !strings.HasPrefix(line, "#") && (i == 0 || !strings.HasPrefix(lines[i-1], "#")) {
			t.Errorf("line %d %q has no comment", i+1, line)
		}
	}
}

func TestFieldDocs(t *testing.T) {
	docs, err := fieldDocs("..")
	if err != nil {
		t.Fatal(err)
	}
	if d := docs["LoggingConfig.Retention"]; !strings.Contains(d, "rolled files older") {
		t.Fatalf("LoggingConfig.Retention doc = %q", d)
	}
	if d := docs["SystemConfig.Path"]; d == "" {
		t.Fatal("SystemConfig.Path has no doc")
	}
}
