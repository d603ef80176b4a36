package objstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store is a client of one bucket and key prefix. It is safe for
// concurrent use.
type Store struct {
	client      *minio.Client // retries transient failures
	core        minio.Core    // the same client, request by request
	probe       *minio.Client // no retries, for Check
	transport   *http.Transport
	bucket      string
	prefix      string
	region      string
	pathStyle   bool
	endpoint    string // scheme://host:port, for messages
	partSize    int64
	concurrency int
	timeout     time.Duration
	envCreds    bool // the credentials came from the environment
}

// New returns a Store for cfg. It validates cfg and reads the CA bundle and
// the environment credentials, but makes no request; call [Store.Check]
// for that.
func New(cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	host, secure, err := parseEndpoint(cfg.Endpoint, cfg.TLS)
	if err != nil {
		return nil, err
	}
	transport, err := newTransport(cfg, secure)
	if err != nil {
		return nil, err
	}
	creds, envCreds, err := newCredentials(cfg)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	opts := minio.Options{
		Creds:        creds,
		Secure:       secure,
		Transport:    transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
		// A few quick retries, so a read fails within about a second
		// when the store is down; the remote tier retries uploads and
		// deletions itself, with a backoff.
		MaxRetries: 3,
	}
	client, err := minio.New(host, &opts)
	if err != nil {
		return nil, configErr("tiered_storage.endpoint", fmt.Sprintf("%q: %v", cfg.Endpoint, err))
	}
	opts.MaxRetries = 1 // a single attempt
	probe, err := minio.New(host, &opts)
	if err != nil {
		return nil, configErr("tiered_storage.endpoint", fmt.Sprintf("%q: %v", cfg.Endpoint, err))
	}
	scheme := "http"
	if secure {
		scheme = "https"
	}
	return &Store{
		client:      client,
		core:        minio.Core{Client: client},
		probe:       probe,
		transport:   transport,
		bucket:      cfg.Bucket,
		prefix:      cfg.Prefix,
		region:      cfg.Region,
		pathStyle:   cfg.PathStyle,
		endpoint:    scheme + "://" + host,
		partSize:    cfg.PartSize,
		concurrency: cfg.Concurrency,
		timeout:     cfg.Timeout,
		envCreds:    envCreds,
	}, nil
}

// Key returns the full key of rel: Prefix + "/" + rel, or rel when Prefix
// is "". Leading slashes of rel are dropped.
func (s *Store) Key(rel string) string {
	for len(rel) > 0 && rel[0] == '/' {
		rel = rel[1:]
	}
	if s.prefix == "" {
		return rel
	}
	return s.prefix + "/" + rel
}

// Close releases the connections kept open for reuse. The Store remains
// usable; later requests open new connections.
func (s *Store) Close() {
	s.transport.CloseIdleConnections()
}

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Endpoint returns the store's address as scheme://host:port.
func (s *Store) Endpoint() string { return s.endpoint }

// PartSize returns the multipart part size; objects larger than it are
// uploaded in parts of this size, which [ComputeETag] needs to know.
func (s *Store) PartSize() int64 { return s.partSize }

// requestContext bounds one request by the configured timeout.
func (s *Store) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// newCredentials returns static credentials from cfg or, when cfg has
// none, from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN;
// fromEnv reports the latter.
func newCredentials(cfg Config) (creds *credentials.Credentials, fromEnv bool, err error) {
	if cfg.AccessKeyID != "" {
		return credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""), false, nil
	}
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return nil, false, configErr("tiered_storage.access_key_id", "no credentials: set access_key_id and secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
	}
	return credentials.NewStaticV4(id, secret, os.Getenv("AWS_SESSION_TOKEN")), true, nil
}

// newTransport returns the HTTP transport: the client's usual settings,
// the configured CA bundle and certificate verification.
func newTransport(cfg Config, secure bool) (*http.Transport, error) {
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   min(cfg.Timeout, 30*time.Second),
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   max(16, 2*cfg.Concurrency),
		IdleConnTimeout:       time.Minute,
		ResponseHeaderTimeout: cfg.Timeout,
		TLSHandshakeTimeout:   min(cfg.Timeout, 10*time.Second),
		ExpectContinueTimeout: time.Second,
		// Object bodies are returned as stored, never decoded.
		DisableCompression: true,
	}
	if !secure {
		return tr, nil
	}
	tlsConfig := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: cfg.InsecureSkipVerify, //nolint:gosec // an explicit configuration choice
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, configErr("tiered_storage.ca_file", fmt.Sprintf("cannot read the CA bundle: %v", err), err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, configErr("tiered_storage.ca_file", fmt.Sprintf("%s holds no PEM certificate", cfg.CAFile))
		}
		tlsConfig.RootCAs = pool
	}
	tr.TLSClientConfig = tlsConfig
	return tr, nil
}
