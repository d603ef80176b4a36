package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	if c.TCP.Address != "127.0.0.1:8090" || c.System.Path != "local_data" || c.MessageBus.MaxMessageSize != 64<<20 {
		t.Fatalf("unexpected defaults: %+v", c)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	file := `
[system]
path = "from_file"
[tcp]
address = "127.0.0.1:9000"
max_connections = 7
[heartbeat]
interval = "5 s"
[consumer_group]
rebalancing_timeout = "2 s"
[message_bus]
max_message_size = "1 MiB"
[partition]
prepare_queue_depth = 32
`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"IGGY_TCP_ADDRESS=127.0.0.1:9100",
		"IGGY_PERSONAL_ACCESS_TOKEN_MAX_TOKENS_PER_USER=7",
		"IGGY_HEARTBEAT_ENABLED=false",
		"IGGY_ROOT_USERNAME=admin",
		"IGGY_HTTP_ADDRESS=127.0.0.1:1",
		"IGGY_PARTITION_PREPARE_QUEUE_DEPTH=1",
		"PATH=/bin",
	}
	cfg, notices, err := Load(path, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Default()
	want.System.Path = "from_file"
	want.TCP.Address = "127.0.0.1:9100"
	want.TCP.MaxConnections = 7
	want.Heartbeat.Interval = Duration(5 * time.Second)
	want.Heartbeat.Enabled = false
	want.ConsumerGroup.RebalancingTimeout = Duration(2 * time.Second)
	want.MessageBus.MaxMessageSize = 1 << 20
	want.PersonalAccessToken.MaxTokensPerUser = 7
	want.HTTP.Address = "127.0.0.1:1"
	if d := cmp.Diff(want, cfg); d != "" {
		t.Fatalf("config mismatch (-want +got):\n%s", d)
	}
	for _, n := range notices {
		if n.Warn {
			t.Errorf("unexpected warning %q", n.Message)
		}
	}
	if len(notices) != 2 {
		t.Errorf("want 2 informational notices (partition.prepare_queue_depth, IGGY_PARTITION_PREPARE_QUEUE_DEPTH), got %+v", notices)
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	_, notices, err := Parse([]byte("[tcp]\naddres = \"x\"\n[bogus]\nk = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	for _, n := range notices {
		if n.Warn {
			warns = append(warns, n.Message)
		}
	}
	if len(warns) != 2 || !strings.Contains(warns[0]+warns[1], "did you mean tcp.address?") {
		t.Fatalf("warnings = %q", warns)
	}
	_, notices, err = Load("", []string{"IGGY_TCP_ADRESS=1"})
	if err != nil || len(notices) != 1 || !notices[0].Warn || !strings.Contains(notices[0].Message, "IGGY_TCP_ADDRESS") {
		t.Fatalf("env notices = %+v, err %v", notices, err)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want string
	}{
		{name: "relocated key in file", file: "[system.segment]\nsize = \"1 GiB\"\n", want: "segment_size"},
		{name: "removed section in file", file: "[system.message_deduplication]\nenabled = true\n", want: "removed"},
		{name: "relocated env", env: []string{"IGGY_SYSTEM_TOPIC_MAX_SIZE=1"}, want: "max_topic_size"},
		{name: "bad env bool", env: []string{"IGGY_TCP_ENABLED=maybe"}, want: "IGGY_TCP_ENABLED"},
		{name: "bad env duration", env: []string{"IGGY_HEARTBEAT_INTERVAL=soon"}, want: "IGGY_HEARTBEAT_INTERVAL"},
		{name: "bad file type", file: "[tcp]\nmax_connections = \"many\"\n", want: "max_connections"},
		{name: "bad toml", file: "[tcp\n", want: "config file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = filepath.Join(t.TempDir(), "c.toml")
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := Load(path, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, _, err := Load(filepath.Join(t.TempDir(), "missing.toml"), nil); err == nil {
		t.Fatal("missing explicit config file must be an error")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"empty path", func(c *Config) { c.System.Path = " " }, "system.path"},
		{"bad level", func(c *Config) { c.System.Logging.Level = "loud" }, "system.logging.level"},
		{"bad address", func(c *Config) { c.TCP.Address = "nowhere" }, "tcp.address"},
		{"bad port", func(c *Config) { c.TCP.Address = "127.0.0.1:99999" }, "tcp.address"},
		{"zero connections", func(c *Config) { c.TCP.MaxConnections = 0 }, "tcp.max_connections"},
		{"zero read timeout", func(c *Config) { c.TCP.FrameReadTimeout = 0 }, "tcp.frame_read_timeout"},
		{"zero write timeout", func(c *Config) { c.TCP.WriteTimeout = 0 }, "tcp.write_timeout"},
		{"tls files", func(c *Config) { c.TCP.TLS = TLSConfig{Enabled: true} }, "tcp.tls"},
		{"heartbeat", func(c *Config) { c.Heartbeat.Interval = 0 }, "heartbeat.interval"},
		{"pat cap", func(c *Config) { c.PersonalAccessToken.MaxTokensPerUser = 0 }, "max_tokens_per_user"},
		{"cleaner", func(c *Config) { c.PersonalAccessToken.Cleaner.Interval = 0 }, "cleaner.interval"},
		{"table small", func(c *Config) { c.Metadata.ClientsTableMax = 1 }, "clients_table_max"},
		{"table large", func(c *Config) { c.Metadata.ClientsTableMax = 65537 }, "clients_table_max"},
		{"frame small", func(c *Config) { c.MessageBus.MaxMessageSize = 100 }, "max_message_size"},
		{"frame large", func(c *Config) { c.MessageBus.MaxMessageSize = 2 << 30 }, "max_message_size"},
		{"rebalancing timeout", func(c *Config) { c.ConsumerGroup.RebalancingTimeout = 0 }, "consumer_group.rebalancing_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestEnvNamesCoverSchema(t *testing.T) {
	keys := Keys()
	seen := map[string]string{}
	for _, k := range keys {
		e := EnvName(k)
		if prev, dup := seen[e]; dup {
			t.Fatalf("keys %s and %s share env name %s", prev, k, e)
		}
		seen[e] = k
	}
	for _, want := range []string{"IGGY_TCP_ADDRESS", "IGGY_SYSTEM_PATH", "IGGY_SYSTEM_LOGGING_LEVEL", "IGGY_HEARTBEAT_INTERVAL", "IGGY_PERSONAL_ACCESS_TOKEN_MAX_TOKENS_PER_USER", "IGGY_METADATA_CLIENTS_TABLE_MAX", "IGGY_MESSAGE_BUS_MAX_MESSAGE_SIZE", "IGGY_TCP_TLS_ENABLED"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("schema has no %s", want)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	c := Default()
	c.TCP.Address = "0.0.0.0:1"
	c.Heartbeat.Interval = Duration(90 * time.Second)
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, notices, err := Parse(b)
	if err != nil || len(notices) != 0 {
		t.Fatalf("Parse(Encode()) err %v notices %+v\n%s", err, notices, b)
	}
	if d := cmp.Diff(c, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("[tcp]\naddress = \"127.0.0.1:1\"\n"))
	f.Add([]byte("[heartbeat]\ninterval = \"1 m 30 s\"\n[message_bus]\nmax_message_size = 1024\n"))
	f.Add([]byte("[system.segment]\nsize = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := Parse(data)
		if err != nil {
			return
		}
		_ = c.Validate()
		b, err := c.Encode()
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		again, _, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(Encode(c)) = %v\n%s", err, b)
		}
		if d := cmp.Diff(c, again); d != "" {
			t.Fatalf("round trip (-first +second):\n%s", d)
		}
	})
}

func TestRootCredentials(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        []string
		user, pass string
		ok         bool
	}{
		{"defaults", nil, "iggy", "iggy", true},
		{"pair", []string{"IGGY_ROOT_USERNAME=admin", "IGGY_ROOT_PASSWORD=secret"}, "admin", "secret", true},
		{"only user", []string{"IGGY_ROOT_USERNAME=admin"}, "", "", false},
		{"only password", []string{"IGGY_ROOT_PASSWORD=secret"}, "", "", false},
		{"short user", []string{"IGGY_ROOT_USERNAME=ad", "IGGY_ROOT_PASSWORD=secret"}, "", "", false},
		{"long password", []string{"IGGY_ROOT_USERNAME=admin", "IGGY_ROOT_PASSWORD=" + strings.Repeat("x", 101)}, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, p, err := RootCredentials(tc.env)
			if (err == nil) != tc.ok || u != tc.user || p != tc.pass {
				t.Fatalf("RootCredentials = %q %q %v", u, p, err)
			}
		})
	}
}
