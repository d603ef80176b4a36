package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Connection-string transports (transports.md §8).
const (
	SchemeTCP  = "tcp"
	SchemeQUIC = "quic"
	SchemeWS   = "ws"
)

// ConnectionString is a parsed iggy[+transport]://credentials@host:port?options
// string, as the reference SDKs accept it: iggy:// and iggy+tcp:// (TCP),
// iggy+quic://, iggy+ws:// (WSS with ?tls=true). A credential without ':'
// is a personal access token.
//
// Unlike the reference SDKs, the address part may list several seeds
// separated by commas, each with its port:
// iggy://user:pass@10.0.0.1:8090,10.0.0.2:8090,[fd00::3]:8090?tls=true.
// Dial tries them in order (see WithServerAddresses).
type ConnectionString struct {
	// Transport is SchemeTCP, SchemeQUIC or SchemeWS.
	Transport string
	// Addr is the first "host:port".
	Addr string
	// Addrs is every "host:port" of the string, Addr first.
	Addrs []string
	// Username and Password, or Token, are the credentials (may be empty).
	Username, Password, Token string
	// TLS is the client TLS configuration the options ask for (tls=true,
	// or validate_certificate=true on QUIC); nil means none, which on QUIC
	// is the reference's default of not verifying the certificate.
	TLS *tls.Config
	// Heartbeat is heartbeat_interval (0: the client default).
	Heartbeat time.Duration
	// Reconnect is reconnection_retries / reconnection_interval.
	Reconnect ReconnectPolicy
}

// optionKeys lists the option keys each transport accepts; unknown keys
// are errors, as in the reference. Keys without an effect in this SDK
// (buffer sizes, windows, MTU, reestablish delays) are accepted and
// ignored.
var optionKeys = map[string][]string{
	SchemeTCP: {"tls", "tls_domain", "tls_ca_file", "tls_validate_certificate", "nodelay",
		"heartbeat_interval", "reconnection_retries", "reconnection_interval", "reestablish_after"},
	SchemeQUIC: {"response_buffer_size", "max_concurrent_bidi_streams", "datagram_send_buffer_size",
		"initial_mtu", "send_window", "receive_window", "keep_alive_interval", "max_idle_timeout",
		"validate_certificate", "heartbeat_interval", "reconnection_max_retries",
		"reconnection_interval", "reconnection_reestablish_after"},
	SchemeWS: {"heartbeat_interval", "reconnection_retries", "reconnection_interval", "reestablish_after",
		"read_buffer_size", "write_buffer_size", "max_write_buffer_size", "max_message_size",
		"max_frame_size", "accept_unmasked_frames", "tls", "tls_domain", "tls_ca_file",
		"tls_validate_certificate"},
}

// IsConnectionString reports whether s is an iggy:// or iggy+…://
// connection string rather than a plain "host:port".
func IsConnectionString(s string) bool {
	return strings.HasPrefix(s, "iggy://") || strings.HasPrefix(s, "iggy+")
}

// ParseConnectionString parses s (see ConnectionString).
func ParseConnectionString(s string) (*ConnectionString, error) {
	first, addrs, err := splitHosts(s)
	if err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	u, err := url.Parse(first)
	if err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	cs := &ConnectionString{}
	switch u.Scheme {
	case "iggy", "iggy+tcp":
		cs.Transport = SchemeTCP
	case "iggy+quic":
		cs.Transport = SchemeQUIC
	case "iggy+ws":
		cs.Transport = SchemeWS
	case "iggy+http":
		return nil, errors.New("connection string: iggy+http:// is not supported by this SDK")
	default:
		return nil, fmt.Errorf("connection string: unknown scheme %q (want iggy://, iggy+tcp://, iggy+quic:// or iggy+ws://)", u.Scheme)
	}
	if u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("connection string: %q has no host:port", u.Host)
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("connection string: unexpected path %q", u.Path)
	}
	cs.Addr = u.Host
	cs.Addrs = append([]string{u.Host}, addrs...)
	for _, a := range cs.Addrs {
		if err := checkAddr(a); err != nil {
			return nil, fmt.Errorf("connection string: %w", err)
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			cs.Username, cs.Password = u.User.Username(), p
		} else {
			cs.Token = u.User.Username()
		}
	}
	if err := cs.applyOptions(u.Query()); err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	return cs, nil
}

// splitHosts cuts the extra seeds out of a connection string's authority
// (after the credentials, up to the path, query or fragment): it returns
// s with only the first address, and the others.
func splitHosts(s string) (string, []string, error) {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s, nil, nil
	}
	start := len(s) - len(rest)
	end := len(s)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = start + i
	}
	auth := s[start:end]
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		start += i + 1
		auth = auth[i+1:]
	}
	hosts := strings.Split(auth, ",")
	if len(hosts) == 1 {
		return s, nil, nil
	}
	for i, h := range hosts {
		hosts[i] = strings.TrimSpace(h)
		if hosts[i] == "" {
			return "", nil, errors.New("empty address in the host list")
		}
	}
	return s[:start] + hosts[0] + s[end:], hosts[1:], nil
}

func (cs *ConnectionString) applyOptions(q url.Values) error {
	allowed := optionKeys[cs.Transport]
	get := func(k string) string { return q.Get(k) }
	for k, v := range q {
		if !contains(allowed, k) {
			return fmt.Errorf("unknown option %q for iggy+%s", k, cs.Transport)
		}
		if len(v) != 1 {
			return fmt.Errorf("option %q given %d times", k, len(v))
		}
	}
	var err error
	boolOpt := func(k string, def bool) bool {
		if v := get(k); v != "" && err == nil {
			b, perr := strconv.ParseBool(v)
			if perr != nil {
				err = fmt.Errorf("option %s=%q: want true or false", k, v)
			}
			return b
		}
		return def
	}
	useTLS := boolOpt("tls", false)
	validate := boolOpt("tls_validate_certificate", cs.Transport == SchemeTCP)
	if cs.Transport == SchemeQUIC && boolOpt("validate_certificate", false) {
		useTLS, validate = true, true
	}
	if err != nil {
		return err
	}
	if useTLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: get("tls_domain"), InsecureSkipVerify: !validate} //nolint:gosec // the reference's default for ws (tls_validate_certificate=false)
		if cs.Transport == SchemeQUIC {
			cfg.ServerName = "localhost" // the reference SDK's fixed QUIC server name
		}
		if ca := get("tls_ca_file"); ca != "" {
			pem, rerr := os.ReadFile(ca)
			if rerr != nil {
				return fmt.Errorf("tls_ca_file: %w", rerr)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("tls_ca_file %s: no PEM certificate", ca)
			}
			cfg.RootCAs = pool
		}
		cs.TLS = cfg
	}
	if v := get("heartbeat_interval"); v != "" {
		if cs.Heartbeat, err = parseMillisOrDuration(v); err != nil {
			return fmt.Errorf("option heartbeat_interval: %w", err)
		}
	}
	for _, k := range []string{"reconnection_retries", "reconnection_max_retries"} {
		if v := get(k); v != "" {
			if v == "unlimited" {
				cs.Reconnect.MaxAttempts = math.MaxInt32
				continue
			}
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 0 {
				return fmt.Errorf("option %s=%q: want a count or unlimited", k, v)
			}
			cs.Reconnect.MaxAttempts = n
			cs.Reconnect.Disabled = n == 0
		}
	}
	if v := get("reconnection_interval"); v != "" {
		if cs.Reconnect.InitialBackoff, err = parseMillisOrDuration(v); err != nil {
			return fmt.Errorf("option reconnection_interval: %w", err)
		}
	}
	return nil
}

// parseMillisOrDuration reads "5s", "1 s", "500ms" or a bare number of
// milliseconds.
func parseMillisOrDuration(v string) (time.Duration, error) {
	v = strings.ReplaceAll(strings.TrimSpace(v), " ", "")
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// options returns the client options the connection string sets.
func (cs *ConnectionString) options() []Option {
	var opts []Option
	switch {
	case cs.Token != "":
		opts = append(opts, WithToken(cs.Token))
	case cs.Username != "":
		opts = append(opts, WithCredentials(cs.Username, cs.Password))
	}
	if cs.TLS != nil {
		opts = append(opts, WithTLS(cs.TLS))
	}
	if cs.Heartbeat > 0 {
		opts = append(opts, WithHeartbeat(cs.Heartbeat))
	}
	if r := cs.Reconnect; r != (ReconnectPolicy{}) {
		opts = append(opts, WithReconnect(r))
	}
	return opts
}

// dialConnectionString is Dial for a connection string: its settings
// come first, so explicit opts override them. QUIC and WebSocket need
// their transport passed with WithTransport (client/quic, client/ws).
func dialConnectionString(ctx context.Context, s string, opts []Option) (*Client, error) {
	cs, err := ParseConnectionString(s)
	if err != nil {
		return nil, err
	}
	var probe options
	for _, f := range opts {
		f(&probe)
	}
	have := SchemeTCP
	if probe.transport != nil {
		have = probe.transport.Scheme()
	}
	if have != cs.Transport {
		if probe.transport == nil {
			return nil, fmt.Errorf("connection string iggy+%s:// needs client.WithTransport with the client/%s transport", cs.Transport, cs.Transport)
		}
		return nil, fmt.Errorf("connection string iggy+%s:// but WithTransport gives %q", cs.Transport, have)
	}
	if _, _, err := net.SplitHostPort(cs.Addr); err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	return Dial(ctx, strings.Join(cs.Addrs, ","), append(cs.options(), opts...)...)
}
