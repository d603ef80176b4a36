package client

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// Defaults of the connection options.
const (
	// DefaultDialTimeout bounds one TCP (and TLS) connection attempt.
	DefaultDialTimeout = 10 * time.Second
	// DefaultResponseTimeout is how long the oldest request on a connection
	// may wait for its reply before the connection is treated as broken and
	// the request is retried on a new one (the official SDKs retry after a
	// read timeout, framing.md "Request numbering").
	DefaultResponseTimeout = 30 * time.Second
	// DefaultHeartbeat is the idle time after which a logged-in connection
	// sends a PING, as the official SDKs do every 5 s (semantics.md §1.10).
	DefaultHeartbeat = 5 * time.Second
	// DefaultSDKName is the sdk_name sent in the login body.
	DefaultSDKName = "iggo-go-sdk"
	// DefaultSDKVersion is the sdk_version sent in the login body.
	DefaultSDKVersion = "0.1.0"
)

// ReconnectPolicy says how a Client replaces a broken connection. Every
// attempt dials one candidate address, logs in again with the same client
// id (a new session epoch), follows the cluster leader (ClusterPolicy)
// and then resends the requests that were in flight with their original
// request numbers. The candidates are, in this order and each once per
// round: the leader a failover check named, the current address, the
// seeds (Dial's addr, WithServerAddresses) and the healthy nodes of the
// last cluster metadata read; the backoff pause follows each round.
type ReconnectPolicy struct {
	// Disabled turns reconnection off: a broken connection fails the
	// requests in flight with an error matching wire.ErrDisconnected and
	// every later call fails the same way.
	Disabled bool
	// MaxAttempts bounds the attempts (one address each) of one
	// reconnect cycle; 0 means DefaultReconnectAttempts. A cycle that runs
	// out fails the waiting requests; the next call starts a new cycle.
	MaxAttempts int
	// InitialBackoff is the pause after the first failed round; it
	// doubles up to MaxBackoff. Zero values take the defaults.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
}

// Reconnect defaults.
const (
	DefaultReconnectAttempts       = 20
	DefaultReconnectInitialBackoff = 100 * time.Millisecond
	DefaultReconnectMaxBackoff     = 5 * time.Second
)

// RetryPolicy bounds the retries of a request answered with a transient
// rejection (57 TransientNotCommitted, 58 TransientNotAccepted;
// semantics.md §1.7, cluster-contract.md §3). The identical frame, with
// the same client id and request number, is resent after a pause that
// doubles from InitialBackoff to MaxBackoff (by default a fixed 50 ms, as
// the official SDKs), until the request succeeds, fails otherwise, or
// Budget has passed since its first attempt.
type RetryPolicy struct {
	// MaxAttempts bounds the number of retries after the first try; 0
	// means no bound beyond Budget, a negative value disables retries.
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// Budget is the time one request may spend replaying transient
	// rejections, across leader moves; 0 means DefaultRequestBudget.
	Budget time.Duration
}

// Transient retry defaults.
const (
	DefaultTransientInitialBackoff = 50 * time.Millisecond
	DefaultTransientMaxBackoff     = 50 * time.Millisecond
	// DefaultRequestBudget is the official SDKs' 30 s per request.
	DefaultRequestBudget = 30 * time.Second
)

// DialFunc opens the transport connection; the default is a net.Dialer
// with the dial timeout.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

type credentials struct {
	username, password string
	token              string // personal access token; used when non-empty
}

type options struct {
	tls             *tls.Config
	creds           *credentials
	dialTimeout     time.Duration
	responseTimeout time.Duration
	heartbeat       time.Duration
	logger          *slog.Logger
	reconnect       ReconnectPolicy
	transient       RetryPolicy
	clientID        wire.Uint128
	sdkName         string
	sdkVersion      string
	dial            DialFunc
	transport       Transport // transport.go; nil means TCP
	maxFrame        int
	lockstep        bool
	seeds           []string      // WithServerAddresses, after Dial's own
	cluster         ClusterPolicy // cluster.go
	noRouting       bool          // WithPartitionRouting(false), route.go
}

func defaultOptions() options {
	return options{
		dialTimeout:     DefaultDialTimeout,
		responseTimeout: DefaultResponseTimeout,
		heartbeat:       DefaultHeartbeat,
		logger:          slog.New(slog.DiscardHandler),
		sdkName:         DefaultSDKName,
		sdkVersion:      DefaultSDKVersion,
		maxFrame:        wire.MaxFrameSize,
	}
}

// normalize fills zero policy fields with their defaults.
func (o *options) normalize() {
	r := &o.reconnect
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = DefaultReconnectAttempts
	}
	if r.InitialBackoff <= 0 {
		r.InitialBackoff = DefaultReconnectInitialBackoff
	}
	if r.MaxBackoff < r.InitialBackoff {
		r.MaxBackoff = max(DefaultReconnectMaxBackoff, r.InitialBackoff)
	}
	t := &o.transient
	if t.Budget <= 0 {
		t.Budget = DefaultRequestBudget
	}
	if t.InitialBackoff <= 0 {
		t.InitialBackoff = DefaultTransientInitialBackoff
	}
	if t.MaxBackoff < t.InitialBackoff {
		t.MaxBackoff = max(DefaultTransientMaxBackoff, t.InitialBackoff)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	o.cluster.normalize()
	if o.maxFrame < wire.HeaderSize {
		o.maxFrame = wire.MaxFrameSize
	}
	o.applyTransport()
}

// Option configures Dial.
type Option func(*options)

// WithTLS makes the client speak TLS over TCP with cfg. When cfg has no
// ServerName, the host part of the dialed address is used.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithCredentials logs in with a username and password when the
// connection is established (LOGIN_REGISTER, code 40) and again after
// every reconnect.
func WithCredentials(username, password string) Option {
	return func(o *options) { o.creds = &credentials{username: username, password: password} }
}

// WithToken logs in with a personal access token (LOGIN_REGISTER_WITH_PAT,
// code 45) when the connection is established and after every reconnect.
func WithToken(token string) Option {
	return func(o *options) { o.creds = &credentials{token: token} }
}

// WithDialTimeout bounds each connection attempt (TCP connect and TLS
// handshake). Zero means no bound beyond the context.
func WithDialTimeout(d time.Duration) Option { return func(o *options) { o.dialTimeout = d } }

// WithResponseTimeout sets how long the oldest request may wait for its
// reply before the connection is considered broken (then the client
// reconnects and resends it with the same request number). Zero disables
// the check: a server that never answers then blocks callers until their
// context ends.
func WithResponseTimeout(d time.Duration) Option {
	return func(o *options) { o.responseTimeout = d }
}

// WithHeartbeat sets the idle interval after which a logged-in connection
// sends a PING so the server does not evict it as stale (semantics.md
// §1.10). Zero disables heartbeats.
func WithHeartbeat(d time.Duration) Option { return func(o *options) { o.heartbeat = d } }

// WithLogger sets the logger for connection events (reconnects,
// evictions). The default discards.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithReconnect sets the reconnect policy.
func WithReconnect(p ReconnectPolicy) Option { return func(o *options) { o.reconnect = p } }

// WithTransientRetry sets the retry policy for transient rejections.
func WithTransientRetry(p RetryPolicy) Option { return func(o *options) { o.transient = p } }

// WithClientID sets the protocol client id (request header bytes
// 128..144) instead of a random one, to resume a logical client: the
// server's client table and partition windows are keyed by it, so
// requests retried under the same id and request numbers are
// deduplicated (upstream-framing.md). The id must be non-zero.
func WithClientID(id wire.Uint128) Option { return func(o *options) { o.clientID = id } }

// WithSDKInfo sets the sdk_name and sdk_version sent at login (each 1..255
// bytes); the server reports them in GET_CLIENTS.
func WithSDKInfo(name, version string) Option {
	return func(o *options) { o.sdkName, o.sdkVersion = name, version }
}

// WithDialer replaces the function that opens the TCP connection, e.g. to
// go through a proxy. TLS, when configured, is layered on top.
func WithDialer(d DialFunc) Option { return func(o *options) { o.dial = d } }

// WithMaxFrameSize bounds the size of a reply frame the client accepts
// (default wire.MaxFrameSize, 64 MiB, as the official Go SDK).
func WithMaxFrameSize(n int) Option { return func(o *options) { o.maxFrame = n } }

// WithLockstep sends one request at a time and waits for its reply before
// writing the next, as the official SDKs do. By default requests are
// pipelined, which needs a server that answers in request order (ours
// does); use lockstep for a server that may not.
func WithLockstep() Option { return func(o *options) { o.lockstep = true } }
