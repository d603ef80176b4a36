package config

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// HTTPConfig is [http]: the JSON REST API (../shared/design/http-api.md
// §1). It serves plain HTTP/1.1, or HTTPS with HTTP/2 and HTTP/1.1 when
// TLS.Enabled; never both on one port.
type HTTPConfig struct {
	Enabled bool `toml:"enabled"`
	// Address is the TCP bind address (port 0 picks a free one).
	Address string `toml:"address"`
	// MaxRequestSize caps every request body; a larger body is 413.
	MaxRequestSize Size `toml:"max_request_size"`
	// WebUI serves the embedded console under /ui when it is built in.
	WebUI   bool              `toml:"web_ui"`
	CORS    HTTPCORSConfig    `toml:"cors"`
	JWT     HTTPJWTConfig     `toml:"jwt"`
	Metrics HTTPMetricsConfig `toml:"metrics"`
	TLS     HTTPTLSConfig     `toml:"tls"`
}

// HTTPCORSConfig is [http.cors] (http-api.md §10).
type HTTPCORSConfig struct {
	Enabled        bool       `toml:"enabled"`
	AllowedMethods StringList `toml:"allowed_methods"`
	// AllowedOrigins: a leading "*" allows any origin; an empty list none.
	AllowedOrigins      StringList `toml:"allowed_origins"`
	AllowedHeaders      StringList `toml:"allowed_headers"`
	ExposedHeaders      StringList `toml:"exposed_headers"`
	AllowCredentials    bool       `toml:"allow_credentials"`
	AllowPrivateNetwork bool       `toml:"allow_private_network"`
}

// HTTPJWTConfig is [http.jwt] (http-api.md §3). Trusted issuers
// ([[http.jwt.trusted_issuers]]) are not implemented: the table is
// accepted and reported as unused.
type HTTPJWTConfig struct {
	// Algorithm is HS256, HS384 or HS512.
	Algorithm      string     `toml:"algorithm"`
	Issuer         string     `toml:"issuer"`
	Audience       string     `toml:"audience"`
	ValidIssuers   StringList `toml:"valid_issuers"`
	ValidAudiences StringList `toml:"valid_audiences"`
	// AccessTokenExpiry is the token lifetime; "none" issues tokens that
	// expire 1,000,000,000 s after issue.
	AccessTokenExpiry TokenExpiry `toml:"access_token_expiry"`
	ClockSkew         Duration    `toml:"clock_skew"`
	NotBefore         Duration    `toml:"not_before"`
	// EncodingSecret and DecodingSecret are the HMAC key; both empty means
	// a random key per start. They are never written to the runtime copy
	// of the configuration.
	EncodingSecret Secret `toml:"encoding_secret"`
	DecodingSecret Secret `toml:"decoding_secret"`
	// UseBase64Secret: the secrets are standard base64 of the key bytes.
	UseBase64Secret bool `toml:"use_base64_secret"`
}

// HTTPMetricsConfig is [http.metrics] (http-api.md §11).
type HTTPMetricsConfig struct {
	Enabled bool `toml:"enabled"`
	// Endpoint is the metrics path; it must start with '/'.
	Endpoint string `toml:"endpoint"`
}

// HTTPTLSConfig is [http.tls]: a PEM certificate chain and key, both
// required when enabled (there is no self-signed option, as in the
// reference).
type HTTPTLSConfig struct {
	Enabled  bool   `toml:"enabled"`
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// Defaults of [http].
const (
	DefaultHTTPAddress = "127.0.0.1:3000"
	// DefaultHTTPMaxRequestSize is "2 MB".
	DefaultHTTPMaxRequestSize = 2_000_000
	// DefaultJWTIssuer is the default issuer, audience and only valid
	// issuer and audience.
	DefaultJWTIssuer = "iggy.apache.org"
)

func defaultHTTP() HTTPConfig {
	return HTTPConfig{
		Enabled:        true,
		Address:        DefaultHTTPAddress,
		MaxRequestSize: DefaultHTTPMaxRequestSize,
		CORS: HTTPCORSConfig{
			Enabled:        true,
			AllowedMethods: StringList{"GET", "POST", "PUT", "DELETE"},
			AllowedOrigins: StringList{"*"},
			AllowedHeaders: StringList{"content-type", "authorization"},
			ExposedHeaders: StringList{"iggy-view"},
		},
		JWT: HTTPJWTConfig{
			Algorithm:         "HS256",
			Issuer:            DefaultJWTIssuer,
			Audience:          DefaultJWTIssuer,
			ValidIssuers:      StringList{DefaultJWTIssuer},
			ValidAudiences:    StringList{DefaultJWTIssuer},
			AccessTokenExpiry: TokenExpiry(time.Hour),
			ClockSkew:         Duration(5 * time.Second),
		},
		Metrics: HTTPMetricsConfig{Enabled: true, Endpoint: "/metrics"},
		TLS:     HTTPTLSConfig{CertFile: "core/certs/iggy_cert.pem", KeyFile: "core/certs/iggy_key.pem"},
	}
}

// StringList is a list of strings: a TOML array, or comma-separated text
// in an IGGY_* variable.
type StringList []string

// UnmarshalText implements encoding.TextUnmarshaler (comma-separated).
func (l *StringList) UnmarshalText(b []byte) error {
	*l = nil
	for s := range strings.SplitSeq(string(b), ",") {
		*l = append(*l, s)
	}
	return nil
}

// UnmarshalTOML implements toml.Unmarshaler: an array of strings, or one
// comma-separated string.
func (l *StringList) UnmarshalTOML(v any) error {
	switch t := v.(type) {
	case string:
		return l.UnmarshalText([]byte(t))
	case []any:
		out := make(StringList, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("list entry %v is not a string", e)
			}
			out = append(out, s)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("want an array of strings, got %T", v)
}

// Clean returns the entries trimmed, blanks dropped (http-api.md §10).
func (l StringList) Clean() []string {
	var out []string
	for _, s := range l {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Secret is a configuration string that is never written out: it
// marshals as empty text, so runtime/current_config.toml shows `""`.
type Secret string

// MarshalText implements encoding.TextMarshaler and hides the value.
func (Secret) MarshalText() ([]byte, error) { return []byte{}, nil }

// String masks the value, so a Secret printed with fmt or logged by
// accident shows "******" (empty stays empty); use string(s) for the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "******"
}

// LogValue implements slog.LogValuer with the masked value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}

// TokenExpiry is a token lifetime: a duration, or "none" (NoTokenExpiry).
// "server_default" is refused, as in the reference.
type TokenExpiry time.Duration

// NoTokenExpiry is the value of "none".
const NoTokenExpiry TokenExpiry = -1

// MarshalText implements encoding.TextMarshaler.
func (e TokenExpiry) MarshalText() ([]byte, error) {
	if e == NoTokenExpiry {
		return []byte("none"), nil
	}
	return []byte(time.Duration(e).String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (e *TokenExpiry) UnmarshalText(b []byte) error {
	s := strings.ToLower(strings.TrimSpace(string(b)))
	switch s {
	case "none", "unlimited":
		*e = NoTokenExpiry
		return nil
	case "server_default", "default":
		return fmt.Errorf("%q is not allowed for a token lifetime", s)
	}
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*e = TokenExpiry(d)
	return nil
}

// standardMethods are the verbs [http.cors] allowed_methods accepts.
var standardMethods = map[string]bool{
	"GET": true, "POST": true, "PUT": true, "DELETE": true, "HEAD": true,
	"OPTIONS": true, "PATCH": true, "CONNECT": true, "TRACE": true,
}

// JWTKey returns the HMAC key of [http.jwt]: the encoding secret, or the
// decoding one when only that is set (nil when both are empty: the server
// picks a random key). With use_base64_secret the text is decoded.
func (j *HTTPJWTConfig) JWTKey() ([]byte, error) {
	s := string(j.EncodingSecret)
	if s == "" {
		s = string(j.DecodingSecret)
	}
	if s == "" {
		return nil, nil
	}
	if j.UseBase64Secret {
		k, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("secret is not standard base64: %w", err)
		}
		return k, nil
	}
	return []byte(s), nil
}

// validateHTTP checks [http] and its tables; an invalid value refuses
// boot (http-api.md §3, §10, §11).
func (c *Config) validateHTTP() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	h := &c.HTTP
	if h.Enabled {
		if err := checkAddress(h.Address); err != nil {
			bad("http.address", "%v", err)
		}
	}
	if h.MaxRequestSize == 0 {
		bad("http.max_request_size", "must be positive")
	}
	if h.TLS.Enabled && (h.TLS.CertFile == "" || h.TLS.KeyFile == "") {
		bad("http.tls", "cert_file and key_file are both required when enabled")
	}
	if h.Metrics.Enabled && !strings.HasPrefix(h.Metrics.Endpoint, "/") {
		bad("http.metrics.endpoint", "%q must start with '/'", h.Metrics.Endpoint)
	}
	j := &h.JWT
	switch j.Algorithm {
	case "HS256", "HS384", "HS512":
	default:
		bad("http.jwt.algorithm", "%q is not one of HS256, HS384, HS512", j.Algorithm)
	}
	if j.AccessTokenExpiry == 0 || (j.AccessTokenExpiry < 0 && j.AccessTokenExpiry != NoTokenExpiry) {
		bad("http.jwt.access_token_expiry", "must be positive or \"none\"")
	}
	if j.ClockSkew < 0 {
		bad("http.jwt.clock_skew", "must not be negative")
	}
	if j.NotBefore < 0 {
		bad("http.jwt.not_before", "must not be negative")
	}
	if _, err := j.JWTKey(); err != nil {
		bad("http.jwt.encoding_secret", "%v", err)
	}
	errs = append(errs, h.CORS.validate()...)
	return errs
}

func (cors *HTTPCORSConfig) validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	for _, m := range cors.AllowedMethods.Clean() {
		if !standardMethods[strings.ToUpper(m)] {
			bad("http.cors.allowed_methods", "%q is not a standard HTTP method", m)
		}
	}
	origins := cors.AllowedOrigins.Clean()
	for i, o := range origins {
		if o == "*" && i > 0 {
			bad("http.cors.allowed_origins", "\"*\" is only allowed as the first entry")
		}
	}
	if cors.AllowCredentials {
		if len(origins) > 0 && origins[0] == "*" {
			bad("http.cors.allow_credentials", "cannot be combined with a wildcard origin")
		}
		if h := cors.AllowedHeaders.Clean(); len(h) == 1 && h[0] == "*" {
			bad("http.cors.allow_credentials", "cannot be combined with allowed_headers = [\"*\"]")
		}
		if h := cors.ExposedHeaders.Clean(); len(h) == 1 && h[0] == "*" {
			bad("http.cors.allow_credentials", "cannot be combined with exposed_headers = [\"*\"]")
		}
	}
	return errs
}
