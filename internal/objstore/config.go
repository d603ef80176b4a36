package objstore

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Defaults and limits applied by [New].
const (
	// DefaultPartSize is the multipart part size used when Config.PartSize is 0.
	DefaultPartSize = 16 << 20
	// MinPartSize is the smallest part size S3 accepts for every part but the last.
	MinPartSize = 5 << 20
	// MaxPartSize is the largest part size S3 accepts.
	MaxPartSize = 5 << 30
	// MaxParts is the largest number of parts in one multipart upload.
	MaxParts = 10000
	// DefaultTimeout bounds each request when Config.Timeout is 0.
	DefaultTimeout = 60 * time.Second
	// DefaultConcurrency is the number of parts in flight when
	// Config.Concurrency is 0.
	DefaultConcurrency = 4
)

// Config says where the bucket is and how to talk to it. The field comments
// name the tiered_storage configuration key each field comes from; errors
// about a field name that key.
type Config struct {
	// Endpoint is host:port or a URL (http:// or https://); a scheme in
	// the URL decides TLS. (tiered_storage.endpoint)
	Endpoint string
	// Region is the bucket's region; "" lets the client ask the store.
	// (tiered_storage.region)
	Region string
	// Bucket is the bucket name. (tiered_storage.bucket)
	Bucket string
	// Prefix is prepended to every key, joined with "/"; "" allowed.
	// Leading and trailing slashes are ignored. (tiered_storage.prefix)
	Prefix string
	// AccessKeyID and SecretAccessKey are the credentials. When both are
	// empty, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
	// are read from the environment by New.
	// (tiered_storage.access_key_id, tiered_storage.secret_access_key)
	AccessKeyID     string
	SecretAccessKey string
	// PathStyle selects path-style addressing (http://host/bucket/key),
	// which most self-hosted stores need; false selects virtual-hosted
	// style (http://bucket.host/key). (tiered_storage.path_style)
	PathStyle bool
	// TLS selects https when Endpoint has no scheme. (tiered_storage.tls)
	TLS bool
	// CAFile is an extra CA bundle (PEM) to trust, optional.
	// (tiered_storage.ca_file)
	CAFile string
	// InsecureSkipVerify disables TLS certificate verification.
	// (tiered_storage.insecure_skip_verify)
	InsecureSkipVerify bool
	// PartSize is the multipart part size; 0 = DefaultPartSize. Objects
	// larger than this are uploaded in parts. (tiered_storage.part_size)
	PartSize int64
	// Timeout bounds each request; 0 = DefaultTimeout.
	// (tiered_storage.timeout)
	Timeout time.Duration
	// Concurrency is the number of parts of one upload in flight at once;
	// 0 = DefaultConcurrency. (tiered_storage.upload_concurrency)
	Concurrency int
}

// withDefaults returns cfg with zero values replaced by the defaults and
// the prefix normalised, or an error naming the configuration key of the
// first invalid field.
func (cfg Config) withDefaults() (Config, error) {
	if strings.TrimSpace(cfg.Endpoint) == "" {
		return cfg, configErr("tiered_storage.endpoint", "is empty; set it to the object store's host:port or URL")
	}
	if cfg.Bucket == "" {
		return cfg, configErr("tiered_storage.bucket", "is empty")
	}
	if err := checkBucketName(cfg.Bucket); err != nil {
		return cfg, configErr("tiered_storage.bucket", err.Error())
	}
	cfg.Prefix = strings.Trim(cfg.Prefix, "/")
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return cfg, configErr("tiered_storage.access_key_id", "access_key_id and secret_access_key must be set together (or both left empty to use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	switch {
	case cfg.PartSize == 0:
		cfg.PartSize = DefaultPartSize
	case cfg.PartSize < MinPartSize || cfg.PartSize > MaxPartSize:
		return cfg, configErr("tiered_storage.part_size", fmt.Sprintf("%d bytes is outside the range S3 accepts (%d bytes to %d bytes)", cfg.PartSize, MinPartSize, MaxPartSize))
	}
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultTimeout
	case cfg.Timeout < 0:
		return cfg, configErr("tiered_storage.timeout", fmt.Sprintf("%s is negative", cfg.Timeout))
	}
	switch {
	case cfg.Concurrency == 0:
		cfg.Concurrency = DefaultConcurrency
	case cfg.Concurrency < 0:
		return cfg, configErr("tiered_storage.upload_concurrency", fmt.Sprintf("%d is negative", cfg.Concurrency))
	}
	return cfg, nil
}

// parseEndpoint splits an endpoint into the host:port the client dials and
// whether to use TLS. A scheme decides TLS; without one, defaultTLS does.
func parseEndpoint(endpoint string, defaultTLS bool) (host string, secure bool, err error) {
	endpoint = strings.TrimSpace(endpoint)
	if !strings.Contains(endpoint, "://") {
		if strings.ContainsAny(endpoint, "/?#@") {
			return "", false, configErr("tiered_storage.endpoint", fmt.Sprintf("%q is not host:port or an http(s) URL", endpoint))
		}
		return endpoint, defaultTLS, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, configErr("tiered_storage.endpoint", fmt.Sprintf("%q is not a URL: %v", endpoint, err))
	}
	switch u.Scheme {
	case "http":
	case "https":
		secure = true
	default:
		return "", false, configErr("tiered_storage.endpoint", fmt.Sprintf("%q: scheme %q is not http or https", endpoint, u.Scheme))
	}
	if u.Host == "" {
		return "", false, configErr("tiered_storage.endpoint", fmt.Sprintf("%q has no host", endpoint))
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", false, configErr("tiered_storage.endpoint", fmt.Sprintf("%q: only scheme://host:port is supported (no path, query or user)", endpoint))
	}
	return u.Host, secure, nil
}

// checkBucketName applies the S3 bucket naming rules that matter for
// addressing: 3 to 63 characters, lower-case letters, digits, '.' and '-',
// starting and ending with a letter or digit.
func checkBucketName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("%q must be 3 to 63 characters long", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && c != '.' && c != '-' {
			return fmt.Errorf("%q may hold only lower-case letters, digits, '.' and '-'", name)
		}
		if !alnum && (i == 0 || i == len(name)-1) {
			return fmt.Errorf("%q must start and end with a letter or digit", name)
		}
	}
	if strings.Contains(name, "..") {
		return fmt.Errorf("%q must not contain \"..\"", name)
	}
	return nil
}
