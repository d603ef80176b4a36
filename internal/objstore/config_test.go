package objstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func validConfig() Config {
	return Config{
		Endpoint:        "127.0.0.1:9000",
		Bucket:          "bucket",
		AccessKeyID:     "id",
		SecretAccessKey: "secret",
		PathStyle:       true,
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no endpoint", func(c *Config) { c.Endpoint = " " }, "tiered_storage.endpoint: is empty"},
		{"ftp scheme", func(c *Config) { c.Endpoint = "ftp://host:21" }, "tiered_storage.endpoint:"},
		{"URL with path", func(c *Config) { c.Endpoint = "http://host:9000/s3" }, "tiered_storage.endpoint:"},
		{"host with path", func(c *Config) { c.Endpoint = "host:9000/s3" }, "tiered_storage.endpoint:"},
		{"no bucket", func(c *Config) { c.Bucket = "" }, "tiered_storage.bucket: is empty"},
		{"upper-case bucket", func(c *Config) { c.Bucket = "Bucket" }, "tiered_storage.bucket:"},
		{"short bucket", func(c *Config) { c.Bucket = "ab" }, "tiered_storage.bucket:"},
		{"part size too small", func(c *Config) { c.PartSize = MinPartSize - 1 }, "tiered_storage.part_size:"},
		{"part size too large", func(c *Config) { c.PartSize = MaxPartSize + 1 }, "tiered_storage.part_size:"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "tiered_storage.timeout:"},
		{"negative concurrency", func(c *Config) { c.Concurrency = -1 }, "tiered_storage.upload_concurrency:"},
		{"access key without secret", func(c *Config) { c.SecretAccessKey = "" }, "tiered_storage.access_key_id:"},
		{"secret without access key", func(c *Config) { c.AccessKeyID = "" }, "tiered_storage.access_key_id:"},
		{"no credentials anywhere", func(c *Config) { c.AccessKeyID, c.SecretAccessKey = "", "" }, "tiered_storage.access_key_id: no credentials"},
		{"missing CA file", func(c *Config) { c.Endpoint = "https://host"; c.CAFile = filepath.Join(dir, "none.pem") }, "tiered_storage.ca_file: cannot read"},
		{"CA file without PEM", func(c *Config) { c.Endpoint = "https://host"; c.CAFile = notPEM }, "tiered_storage.ca_file:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig()
			tt.mutate(&cfg)
			_, err := New(cfg)
			if err == nil {
				t.Fatalf("New accepted %+v", cfg)
			}
			if !strings.HasPrefix(err.Error(), strings.SplitN(tt.want, ":", 2)[0]) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %q, want one starting with the key and containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("New error is not one line: %q", err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	s, err := New(validConfig())
	if err != nil {
		t.Fatal(err)
	}
	if s.PartSize() != DefaultPartSize || s.timeout != DefaultTimeout || s.concurrency != DefaultConcurrency {
		t.Errorf("defaults: part size %d, timeout %s, concurrency %d", s.PartSize(), s.timeout, s.concurrency)
	}
	if s.Endpoint() != "http://127.0.0.1:9000" {
		t.Errorf("Endpoint() = %q", s.Endpoint())
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		endpoint   string
		defaultTLS bool
		host       string
		secure     bool
	}{
		{"127.0.0.1:9000", false, "127.0.0.1:9000", false},
		{"s3.example.com", true, "s3.example.com", true},
		{"http://127.0.0.1:9000", true, "127.0.0.1:9000", false},
		{"https://s3.example.com", false, "s3.example.com", true},
		{"https://s3.example.com:8443/", false, "s3.example.com:8443", true},
		{" http://[::1]:9000 ", false, "[::1]:9000", false},
	}
	for _, tt := range tests {
		host, secure, err := parseEndpoint(tt.endpoint, tt.defaultTLS)
		if err != nil {
			t.Errorf("parseEndpoint(%q): %v", tt.endpoint, err)
			continue
		}
		if host != tt.host || secure != tt.secure {
			t.Errorf("parseEndpoint(%q, %v) = %q, %v; want %q, %v", tt.endpoint, tt.defaultTLS, host, secure, tt.host, tt.secure)
		}
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		prefix, rel, want string
	}{
		{"", "streams/1/0.log", "streams/1/0.log"},
		{"iggo", "streams/1/0.log", "iggo/streams/1/0.log"},
		{"/iggo/a/", "streams/", "iggo/a/streams/"},
		{"iggo", "/x", "iggo/x"},
		{"iggo", "", "iggo/"},
		{"", "", ""},
	}
	for _, tt := range tests {
		cfg := validConfig()
		cfg.Prefix = tt.prefix
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Key(tt.rel); got != tt.want {
			t.Errorf("prefix %q: Key(%q) = %q, want %q", tt.prefix, tt.rel, got, tt.want)
		}
	}
}

func TestUserMetadata(t *testing.T) {
	got, err := userMetadata(map[string]string{"Segment-Start": "42", "x-amz-meta-crc": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"x-amz-meta-segment-start": "42", "x-amz-meta-crc": "abc"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("userMetadata (-want +got):\n%s", diff)
	}
	for _, bad := range []map[string]string{
		{"": "v"},
		{"a b": "v"},
		{"k": "line\nbreak"},
		{"k": "naïve"},
		{"K": "1", "k": "2"},
	} {
		if _, err := userMetadata(bad); err == nil {
			t.Errorf("userMetadata(%q) accepted", bad)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	tests := []struct {
		in           string
		first, total int64
		ok           bool
	}{
		{"bytes 0-9/100", 0, 100, true},
		{"bytes 10-19/*", 10, -1, true},
		{"", 0, 0, false},
		{"bytes */100", 0, 0, false},
		{"items 0-9/100", 0, 0, false},
	}
	for _, tt := range tests {
		first, total, ok := parseContentRange(tt.in)
		if first != tt.first || total != tt.total || ok != tt.ok {
			t.Errorf("parseContentRange(%q) = %d, %d, %v; want %d, %d, %v", tt.in, first, total, ok, tt.first, tt.total, tt.ok)
		}
	}
}
