package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHumanUnitsRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 30 * time.Second, time.Hour, 7 * 24 * time.Hour, 24 * time.Hour,
		90 * time.Minute, 500 * time.Millisecond, 1500 * time.Microsecond, 3} {
		s := HumanDuration(d)
		got, err := ParseDuration(s)
		if err != nil || got != d {
			t.Errorf("ParseDuration(HumanDuration(%v) = %q) = %v, %v", d, s, got, err)
		}
	}
	if s := HumanDuration(7 * 24 * time.Hour); s != "7 days" {
		t.Errorf("7 days rendered %q", s)
	}
	if s := HumanDuration(0); s != "0" {
		t.Errorf("zero rendered %q", s)
	}
	for n, want := range map[uint64]string{500_000_000: "500 MB", 4_000_000_000: "4 GB", 64 << 20: "64 MiB", 1023: "1023 B", 0: "0", 1 << 30: "1 GiB"} {
		s := HumanSize(n)
		if s != want {
			t.Errorf("HumanSize(%d) = %q, want %q", n, s, want)
		}
		got, err := ParseSize(s)
		if err != nil || got != n {
			t.Errorf("ParseSize(%q) = %d, %v", s, got, err)
		}
	}
}

func TestRenderRoundTripAndMasks(t *testing.T) {
	c := Default()
	c.System.Path = "elsewhere"
	c.System.Logging.Level = "warn,server=debug"
	c.TCP.MaxConnections = 7
	out, err := Render(&c, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, notices, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(Render()): %v\n%s", err, out)
	}
	for _, n := range notices {
		if strings.HasPrefix(n.Message, "unknown") {
			t.Errorf("%s", n.Message)
		}
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip changed the configuration:\n%s", out)
	}
	if !strings.Contains(string(out), "[system.logging]\n") || !strings.Contains(string(out), `retention = "7 days"`) {
		t.Fatalf("unexpected rendering:\n%s", out)
	}
}

// secretHolder is a schema-like struct for the mask rules.
type secretHolder struct {
	Plain  string `toml:"plain"`
	Typed  Secret `toml:"typed"`
	Tagged string `toml:"tagged" secret:"true"`
	Empty  Secret `toml:"empty"`
}

func TestSecretsMasked(t *testing.T) {
	h := secretHolder{Plain: "visible", Typed: "hunter2-typed", Tagged: "hunter2-tagged"}
	var b strings.Builder
	r := renderer{b: &b}
	if err := r.table("s", reflectValue(&h), false); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "hunter2") {
		t.Fatalf("a secret leaked:\n%s", s)
	}
	for _, want := range []string{`plain = "visible"`, `typed = "******"`, `tagged = "******"`, `empty = ""`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in\n%s", want, s)
		}
	}
	for _, k := range SecretKeys() {
		if strings.Contains(k, "logging") {
			t.Errorf("%s is not a secret", k)
		}
	}
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
