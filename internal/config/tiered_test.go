package config

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTieredStorageDefaults(t *testing.T) {
	c := Default()
	want := TieredStorageConfig{
		Enabled:            false,
		Region:             "us-east-1",
		Prefix:             "iggo",
		PathStyle:          true,
		LocalRetentionSize: 1 << 30,
		LocalRetentionAge:  0,
		UploadConcurrency:  2,
		UploadInterval:     Duration(time.Second),
		PartSize:           16 << 20,
		CacheSize:          512 << 20,
		RequestTimeout:     Duration(60 * time.Second),
	}
	if d := cmp.Diff(want, c.TieredStorage); d != "" {
		t.Fatalf("defaults (-want +got):\n%s", d)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("default configuration: %v", err)
	}
	if got := c.TieredStorage.CacheDirPath(c.System.Path); got != filepath.Join("local_data", "tier_cache") {
		t.Errorf("default cache dir %q", got)
	}
}

// enabledTier is a valid enabled [tiered_storage] over the defaults.
func enabledTier() Config {
	c := Default()
	c.TieredStorage.Enabled = true
	c.TieredStorage.Endpoint = "127.0.0.1:9000"
	c.TieredStorage.Bucket = "iggo-segments"
	return c
}

func TestTieredStorageValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string // "" = valid; otherwise every line must appear
	}{
		{name: "enabled minimal", mod: func(*Config) {}},
		{name: "disabled checks nothing", mod: func(c *Config) {
			c.TieredStorage = TieredStorageConfig{Prefix: "/bad//", AccessKeyID: "only-one", UploadConcurrency: 0, PartSize: 1}
		}},
		{name: "endpoint required", mod: func(c *Config) { c.TieredStorage.Endpoint = " " },
			want: "tiered_storage.endpoint: required when tiered_storage.enabled is true"},
		{name: "bucket required", mod: func(c *Config) { c.TieredStorage.Bucket = "" },
			want: "tiered_storage.bucket: required when tiered_storage.enabled is true"},
		{name: "both required", mod: func(c *Config) { c.TieredStorage.Endpoint, c.TieredStorage.Bucket = "", "" },
			want: "tiered_storage.endpoint: required when tiered_storage.enabled is true\ntiered_storage.bucket: required when tiered_storage.enabled is true"},
		{name: "endpoint bad scheme", mod: func(c *Config) { c.TieredStorage.Endpoint = "ftp://host:21" },
			want: "tiered_storage.endpoint: \"ftp://host:21\": the scheme must be http or https"},
		{name: "endpoint with path", mod: func(c *Config) { c.TieredStorage.Endpoint = "http://host:9000/bucket" },
			want: "tiered_storage.endpoint:"},
		{name: "endpoint bad port", mod: func(c *Config) { c.TieredStorage.Endpoint = "host:99999" },
			want: "tiered_storage.endpoint: \"host:99999\" has an invalid port"},
		{name: "endpoint url", mod: func(c *Config) { c.TieredStorage.Endpoint = "https://s3.example.com/" }},
		{name: "region empty", mod: func(c *Config) { c.TieredStorage.Region = "" },
			want: "tiered_storage.region: must not be empty"},
		{name: "prefix empty is allowed", mod: func(c *Config) { c.TieredStorage.Prefix = "" }},
		{name: "prefix nested", mod: func(c *Config) { c.TieredStorage.Prefix = "a/b" }},
		{name: "prefix leading slash", mod: func(c *Config) { c.TieredStorage.Prefix = "/a" }, want: "tiered_storage.prefix:"},
		{name: "prefix trailing slash", mod: func(c *Config) { c.TieredStorage.Prefix = "a/" }, want: "tiered_storage.prefix:"},
		{name: "prefix double slash", mod: func(c *Config) { c.TieredStorage.Prefix = "a//b" }, want: "tiered_storage.prefix:"},
		{name: "both keys", mod: func(c *Config) { c.TieredStorage.AccessKeyID, c.TieredStorage.SecretAccessKey = "id", "secret" }},
		{name: "only access key id", mod: func(c *Config) { c.TieredStorage.AccessKeyID = "id" },
			want: "tiered_storage.secret_access_key: required when tiered_storage.access_key_id is set"},
		{name: "only secret access key", mod: func(c *Config) { c.TieredStorage.SecretAccessKey = "secret" },
			want: "tiered_storage.access_key_id: required when tiered_storage.secret_access_key is set"},
		{name: "concurrency 0", mod: func(c *Config) { c.TieredStorage.UploadConcurrency = 0 },
			want: "tiered_storage.upload_concurrency: 0 is outside 1..=64"},
		{name: "concurrency 65", mod: func(c *Config) { c.TieredStorage.UploadConcurrency = 65 },
			want: "tiered_storage.upload_concurrency: 65 is outside 1..=64"},
		{name: "concurrency 64", mod: func(c *Config) { c.TieredStorage.UploadConcurrency = 64 }},
		{name: "upload interval 0", mod: func(c *Config) { c.TieredStorage.UploadInterval = 0 },
			want: "tiered_storage.upload_interval: must be positive"},
		{name: "part size small", mod: func(c *Config) { c.TieredStorage.PartSize = 5<<20 - 1 },
			want: "tiered_storage.part_size:"},
		{name: "part size 5 MiB", mod: func(c *Config) { c.TieredStorage.PartSize = 5 << 20 }},
		{name: "part size large", mod: func(c *Config) { c.TieredStorage.PartSize = 5<<30 + 1 },
			want: "tiered_storage.part_size:"},
		{name: "cache size small", mod: func(c *Config) { c.TieredStorage.CacheSize = 16<<20 - 1 },
			want: "tiered_storage.cache_size:"},
		{name: "cache size 16 MiB", mod: func(c *Config) { c.TieredStorage.CacheSize = 16 << 20 }},
		{name: "request timeout 0", mod: func(c *Config) { c.TieredStorage.RequestTimeout = 0 },
			want: "tiered_storage.request_timeout: must be positive"},
		{name: "age negative", mod: func(c *Config) { c.TieredStorage.LocalRetentionAge = -1 },
			want: "tiered_storage.local_retention_age:"},
		{name: "retention zero", mod: func(c *Config) { c.TieredStorage.LocalRetentionSize = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := enabledTier()
			tc.mod(&c)
			errs := c.validateTieredStorage()
			if tc.want == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				if err := c.Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			text := strings.Join(got, "\n")
			for _, line := range strings.Split(tc.want, "\n") {
				if !strings.Contains(text, line) {
					t.Errorf("errors %q lack %q", text, line)
				}
			}
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), strings.Split(tc.want, "\n")[0]) {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

func TestTieredStorageEnv(t *testing.T) {
	env := []string{
		"IGGY_TIERED_STORAGE_ENABLED=true",
		"IGGY_TIERED_STORAGE_ENDPOINT=https://minio.internal:9000",
		"IGGY_TIERED_STORAGE_REGION=eu-west-1",
		"IGGY_TIERED_STORAGE_BUCKET=segments",
		"IGGY_TIERED_STORAGE_PREFIX=prod/iggo",
		"IGGY_TIERED_STORAGE_ACCESS_KEY_ID=AKIDEXAMPLE",
		"IGGY_TIERED_STORAGE_SECRET_ACCESS_KEY=wJalrXUtnFEMI",
		"IGGY_TIERED_STORAGE_PATH_STYLE=false",
		"IGGY_TIERED_STORAGE_TLS=true",
		"IGGY_TIERED_STORAGE_CA_FILE=ca.pem",
		"IGGY_TIERED_STORAGE_INSECURE_SKIP_VERIFY=true",
		"IGGY_TIERED_STORAGE_LOCAL_RETENTION_SIZE=0",
		"IGGY_TIERED_STORAGE_LOCAL_RETENTION_AGE=2 days",
		"IGGY_TIERED_STORAGE_UPLOAD_CONCURRENCY=8",
		"IGGY_TIERED_STORAGE_UPLOAD_INTERVAL=250ms",
		"IGGY_TIERED_STORAGE_PART_SIZE=64 MiB",
		"IGGY_TIERED_STORAGE_CACHE_SIZE=2 GiB",
		"IGGY_TIERED_STORAGE_CACHE_DIR=cache/tier",
		"IGGY_TIERED_STORAGE_REQUEST_TIMEOUT=2 m",
	}
	c, notices, err := Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notices {
		t.Errorf("notice %q", n.Message)
	}
	want := TieredStorageConfig{
		Enabled: true, Endpoint: "https://minio.internal:9000", Region: "eu-west-1", Bucket: "segments", Prefix: "prod/iggo",
		AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI", PathStyle: false, TLS: true, CAFile: "ca.pem",
		InsecureSkipVerify: true, LocalRetentionSize: 0, LocalRetentionAge: Duration(48 * time.Hour), UploadConcurrency: 8,
		UploadInterval: Duration(250 * time.Millisecond), PartSize: 64 << 20, CacheSize: 2 << 30,
		CacheDir: "cache/tier", RequestTimeout: Duration(2 * time.Minute),
	}
	if d := cmp.Diff(want, c.TieredStorage); d != "" {
		t.Fatalf("env overrides (-want +got):\n%s", d)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := EnvOverrides(env); len(got) != len(env) {
		t.Errorf("EnvOverrides = %v", got)
	}
	for _, tc := range []struct{ name, env, want string }{
		{"bad bool", "IGGY_TIERED_STORAGE_ENABLED=sometimes", "IGGY_TIERED_STORAGE_ENABLED (tiered_storage.enabled)"},
		{"bad size", "IGGY_TIERED_STORAGE_PART_SIZE=huge", "IGGY_TIERED_STORAGE_PART_SIZE (tiered_storage.part_size)"},
		{"bad duration", "IGGY_TIERED_STORAGE_UPLOAD_INTERVAL=often", "IGGY_TIERED_STORAGE_UPLOAD_INTERVAL (tiered_storage.upload_interval)"},
		{"bad int", "IGGY_TIERED_STORAGE_UPLOAD_CONCURRENCY=two", "IGGY_TIERED_STORAGE_UPLOAD_CONCURRENCY (tiered_storage.upload_concurrency)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Load("", []string{tc.env}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want %q", err, tc.want)
			}
		})
	}
	// Enabled from the environment alone: the required keys are named.
	c, _, err = Load("", []string{"IGGY_TIERED_STORAGE_ENABLED=true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "tiered_storage.bucket: required when tiered_storage.enabled is true") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestTieredStorageFile(t *testing.T) {
	c, notices, err := Parse([]byte(`
[tiered_storage]
enabled = true
endpoint = "minio:9000"
bucket = "b"
local_retention_size = "256 MiB"
local_retention_age = "7 days"
cache_dir = "cache"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notices {
		t.Errorf("notice %q", n.Message)
	}
	ts := c.TieredStorage
	if !ts.Enabled || ts.Endpoint != "minio:9000" || ts.Bucket != "b" || ts.LocalRetentionSize != 256<<20 ||
		ts.LocalRetentionAge.Std() != 7*24*time.Hour || ts.Prefix != "iggo" || !ts.PathStyle {
		t.Fatalf("parsed %+v", ts)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := ts.CacheDirPath("data"); got != filepath.Join("data", "cache") {
		t.Errorf("relative cache dir %q", got)
	}
	abs := filepath.Join(t.TempDir(), "c")
	ts.CacheDir = abs
	if got := ts.CacheDirPath("data"); got != abs {
		t.Errorf("absolute cache dir %q", got)
	}
}

func TestTieredStorageEndpointURL(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		tls      bool
		want     string // "" = error
	}{
		{"127.0.0.1:9000", false, "http://127.0.0.1:9000"},
		{"127.0.0.1:9000", true, "https://127.0.0.1:9000"},
		{"http://minio:9000", true, "http://minio:9000"},
		{"HTTPS://s3.amazonaws.com/", false, "https://s3.amazonaws.com"},
		{"s3.amazonaws.com", true, "https://s3.amazonaws.com"},
		{"[::1]:9000", false, "http://[::1]:9000"},
		{"https://minio:9000", false, "https://minio:9000"},
		{"ftp://minio:21", false, ""},
		{"http://user:pw@minio:9000", false, ""},
		{"http://minio:9000/x", false, ""},
		{"http://minio:9000?x=1", false, ""},
		{"minio:0", false, ""},
		{"minio:port", false, ""},
		{"http://", false, ""},
		{"", false, ""},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			u, err := TieredStorageConfig{Endpoint: tc.endpoint, TLS: tc.tls}.EndpointURL()
			if tc.want == "" {
				if err == nil {
					t.Fatalf("accepted as %v", u)
				}
				return
			}
			if err != nil || u.String() != tc.want {
				t.Fatalf("EndpointURL = %v, %v; want %s", u, err, tc.want)
			}
		})
	}
}

func TestTieredStorageCredentials(t *testing.T) {
	env := map[string]string{EnvAWSAccessKeyID: "env-id", EnvAWSSecretAccessKey: "env-secret"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name           string
		id, secret     Secret
		wantID, wantSK string
	}{
		{"configured", "cfg-id", "cfg-secret", "cfg-id", "cfg-secret"},
		{"from the environment", "", "", "env-id", "env-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, sk := TieredStorageConfig{AccessKeyID: tc.id, SecretAccessKey: tc.secret}.Credentials(getenv)
			if id != tc.wantID || sk != tc.wantSK {
				t.Fatalf("Credentials = %q, %q", id, sk)
			}
		})
	}
	if id, sk := (TieredStorageConfig{}).Credentials(nil); id != "" || sk != "" {
		t.Fatalf("nil getenv: %q, %q", id, sk)
	}
}

// The credentials never appear in Encode (runtime/current_config.toml),
// Render (--print-config), fmt or slog output, and are listed by
// SecretKeys.
func TestTieredStorageSecretsRedacted(t *testing.T) {
	const id, secret = "AKIA-tiered-id-value", "tiered-secret-access-key-value"
	c := enabledTier()
	c.TieredStorage.AccessKeyID, c.TieredStorage.SecretAccessKey = id, secret
	keys := SecretKeys()
	for _, k := range []string{"tiered_storage.access_key_id", "tiered_storage.secret_access_key"} {
		found := false
		for _, s := range keys {
			found = found || s == k
		}
		if !found {
			t.Errorf("SecretKeys() lacks %s: %v", k, keys)
		}
	}
	encoded, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := Render(&c, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "tiered", c.TieredStorage, "id", c.TieredStorage.AccessKeyID)
	for name, out := range map[string]string{
		"Encode": string(encoded), "Render": string(rendered),
		"fmt":  fmt.Sprintf("%v %+v %s", c.TieredStorage, c.TieredStorage, c.TieredStorage.SecretAccessKey),
		"slog": logged.String(),
	} {
		if strings.Contains(out, id) || strings.Contains(out, secret) {
			t.Errorf("%s output holds a credential:\n%s", name, out)
		}
	}
	if !strings.Contains(string(rendered), `access_key_id = "`+Masked+`"`) || !strings.Contains(string(rendered), `secret_access_key = "`+Masked+`"`) {
		t.Errorf("Render does not mask the credentials:\n%s", rendered)
	}
	if !strings.Contains(string(encoded), "[tiered_storage]") {
		t.Errorf("Encode lacks [tiered_storage]:\n%s", encoded)
	}
	// The plain values stay reachable for the client.
	if gotID, gotSK := c.TieredStorage.Credentials(nil); gotID != id || gotSK != secret {
		t.Errorf("Credentials = %q, %q", gotID, gotSK)
	}
}
