package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TieredStorageConfig is [tiered_storage]: sealed segments are uploaded
// to an S3-compatible bucket and read back from it when a poll needs
// them (an Iggo extension; the reference has no such table). The active
// segment always stays on local disk. In a cluster every node must use
// the same bucket and prefix: partition leaders upload, every replica
// reads.
// With enabled = false nothing else in the table is checked.
type TieredStorageConfig struct {
	// Enabled uploads sealed segments to the bucket (default false).
	Enabled bool `toml:"enabled"`
	// Endpoint is the object store: host:port, or an http:// or https://
	// URL; required when enabled.
	Endpoint string `toml:"endpoint"`
	// Region is the signing region (default "us-east-1").
	Region string `toml:"region"`
	// Bucket is the bucket name; required when enabled.
	Bucket string `toml:"bucket"`
	// Prefix starts every object key (default "iggo"); it must not start
	// or end with "/" nor contain "//".
	Prefix string `toml:"prefix"`
	// AccessKeyID is the access key id, a secret (never written out).
	// With secret_access_key also empty, the AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY environment variables are used.
	AccessKeyID Secret `toml:"access_key_id"`
	// SecretAccessKey is the secret access key, a secret (never written
	// out); set both keys or neither.
	SecretAccessKey Secret `toml:"secret_access_key"`
	// PathStyle addresses objects as endpoint/bucket/key (default true);
	// false uses bucket.endpoint/key (virtual-hosted style).
	PathStyle bool `toml:"path_style"`
	// TLS uses https for an endpoint given as host:port (default false);
	// a scheme in endpoint wins.
	TLS bool `toml:"tls"`
	// CAFile is a PEM bundle of extra CAs trusted for the endpoint.
	CAFile string `toml:"ca_file"`
	// InsecureSkipVerify accepts any certificate of the endpoint (tests
	// only).
	InsecureSkipVerify bool `toml:"insecure_skip_verify"`
	// LocalRetentionSize is how many bytes of uploaded sealed segments
	// each partition keeps on local disk (default "1 GiB"); "0" deletes
	// the local copy as soon as it is uploaded. The topic option
	// local_retention_size overrides it.
	LocalRetentionSize Size `toml:"local_retention_size"`
	// LocalRetentionAge drops uploaded sealed data older than this from
	// local disk; "0" (the default) means no age rule. The topic option
	// local_retention_age overrides it.
	LocalRetentionAge Duration `toml:"local_retention_age"`
	// UploadConcurrency is how many segments are uploaded at once
	// (1..=64, default 2).
	UploadConcurrency int `toml:"upload_concurrency"`
	// UploadInterval is how often partitions are scanned for sealed
	// segments to upload (default "1 s").
	UploadInterval Duration `toml:"upload_interval"`
	// PartSize is the part size of multipart uploads (default "16 MiB",
	// at least 5 MiB, at most 5 GiB).
	PartSize Size `toml:"part_size"`
	// CacheSize bounds the local disk cache of segments read back from
	// the bucket (default "512 MiB", at least 16 MiB).
	CacheSize Size `toml:"cache_size"`
	// CacheDir is the cache directory, relative to system.path unless
	// absolute; "" (the default) is {system.path}/tier_cache.
	CacheDir string `toml:"cache_dir"`
	// RequestTimeout bounds one request to the object store (default
	// 60 s).
	RequestTimeout Duration `toml:"request_timeout"`
}

// Limits of [tiered_storage] enforced by Validate.
const (
	// MaxTierUploadConcurrency bounds tiered_storage.upload_concurrency.
	MaxTierUploadConcurrency = 64
	// MinTierPartSize is the smallest tiered_storage.part_size: the
	// smallest part S3 accepts (except the last).
	MinTierPartSize = 5 << 20
	// MaxTierPartSize is the largest tiered_storage.part_size: the
	// largest part S3 accepts.
	MaxTierPartSize = 5 << 30
	// MinTierCacheSize is the smallest tiered_storage.cache_size.
	MinTierCacheSize = 16 << 20
	// DefaultTierCacheDir is the cache directory under system.path used
	// when tiered_storage.cache_dir is empty.
	DefaultTierCacheDir = "tier_cache"
)

// Environment variables read for the object-store credentials when
// tiered_storage.access_key_id and secret_access_key are both empty.
const (
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
)

func defaultTieredStorage() TieredStorageConfig {
	return TieredStorageConfig{
		Region:             "us-east-1",
		Prefix:             "iggo",
		PathStyle:          true,
		LocalRetentionSize: 1 << 30,
		UploadConcurrency:  2,
		UploadInterval:     Duration(time.Second),
		PartSize:           16 << 20,
		CacheSize:          512 << 20,
		RequestTimeout:     Duration(60 * time.Second),
	}
}

// validateTieredStorage checks [tiered_storage]. Nothing is checked when
// it is disabled.
func (c *Config) validateTieredStorage() []error {
	t := &c.TieredStorage
	if !t.Enabled {
		return nil
	}
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("tiered_storage.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if strings.TrimSpace(t.Endpoint) == "" {
		bad("endpoint", "required when tiered_storage.enabled is true")
	} else if _, err := t.EndpointURL(); err != nil {
		bad("endpoint", "%v", err)
	}
	if strings.TrimSpace(t.Bucket) == "" {
		bad("bucket", "required when tiered_storage.enabled is true")
	}
	if strings.TrimSpace(t.Region) == "" {
		bad("region", "must not be empty")
	}
	if p := t.Prefix; strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		bad("prefix", "%q must not start or end with \"/\" nor contain \"//\"", p)
	}
	switch {
	case t.AccessKeyID != "" && t.SecretAccessKey == "":
		bad("secret_access_key", "required when tiered_storage.access_key_id is set")
	case t.AccessKeyID == "" && t.SecretAccessKey != "":
		bad("access_key_id", "required when tiered_storage.secret_access_key is set")
	}
	if t.LocalRetentionAge < 0 {
		bad("local_retention_age", "must not be negative (0 means no age rule)")
	}
	if n := t.UploadConcurrency; n < 1 || n > MaxTierUploadConcurrency {
		bad("upload_concurrency", "%d is outside 1..=%d", n, MaxTierUploadConcurrency)
	}
	if t.UploadInterval <= 0 {
		bad("upload_interval", "must be positive")
	}
	if s := t.PartSize; s < MinTierPartSize || s > MaxTierPartSize {
		bad("part_size", "%s is outside %s..=%s", s, Size(MinTierPartSize), Size(MaxTierPartSize))
	}
	if t.CacheSize < MinTierCacheSize {
		bad("cache_size", "%s is below %s", t.CacheSize, Size(MinTierCacheSize))
	}
	if t.RequestTimeout <= 0 {
		bad("request_timeout", "must be positive")
	}
	return errs
}

// EndpointURL returns the endpoint as a URL with its scheme resolved:
// the scheme given in endpoint, otherwise https when tls is true and http
// when it is false. Only the scheme and host[:port] may be given (a
// trailing "/" is allowed); anything else is an error.
func (t TieredStorageConfig) EndpointURL() (*url.URL, error) {
	raw := strings.TrimSpace(t.Endpoint)
	if raw == "" {
		return nil, errors.New("is empty")
	}
	if !strings.Contains(raw, "://") {
		scheme := "http"
		if t.TLS {
			scheme = "https"
		}
		raw = scheme + "://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not host:port or an http(s) URL", t.Endpoint)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: the scheme must be http or https", t.Endpoint)
	}
	if u.Host == "" || u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: want host[:port], optionally after http:// or https://, and nothing else", t.Endpoint)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return nil, fmt.Errorf("%q has an invalid port", t.Endpoint)
		}
	}
	if strings.ContainsAny(u.Hostname(), " /") || (strings.Contains(u.Hostname(), ":") && net.ParseIP(u.Hostname()) == nil) {
		return nil, fmt.Errorf("%q has an invalid host", t.Endpoint)
	}
	u.Path = ""
	return u, nil
}

// Credentials returns the access key pair to sign requests with: the
// configured pair, or, when both keys are empty, the values of
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY read through getenv
// (os.Getenv in the server). Both results empty means no credentials
// were found.
func (t TieredStorageConfig) Credentials(getenv func(string) string) (accessKeyID, secretAccessKey string) {
	if t.AccessKeyID != "" || t.SecretAccessKey != "" {
		return string(t.AccessKeyID), string(t.SecretAccessKey)
	}
	if getenv == nil {
		return "", ""
	}
	return getenv(EnvAWSAccessKeyID), getenv(EnvAWSSecretAccessKey)
}

// CacheDirPath returns the read-cache directory for the data directory
// systemPath (system.path): cache_dir when absolute, otherwise joined to
// systemPath, and {systemPath}/tier_cache when cache_dir is empty.
func (t TieredStorageConfig) CacheDirPath(systemPath string) string {
	dir := strings.TrimSpace(t.CacheDir)
	if dir == "" {
		dir = DefaultTierCacheDir
	}
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(systemPath, dir)
}
