package httpapi

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// RevocationsFile is the revocation list's file under the data directory.
const RevocationsFile = "http/revocations.bin"

// Options configure a Server.
type Options struct {
	// Config is the [http] table.
	Config config.HTTPConfig
	// Dispatcher runs every command (the same one the binary transports use).
	Dispatcher *dispatch.Dispatcher
	// Authenticator checks passwords and personal access tokens.
	Authenticator *auth.Authenticator
	// DataDir is system.path; the revocation list is kept under it ("" =
	// in memory only).
	DataDir string
	// ClientsTableMax is metadata.clients_table_max; HTTP sessions are
	// capped at half of it.
	ClientsTableMax int
	// Now is the clock (time.Now when nil): token lifetimes and sessions.
	Now func() time.Time
	// Rand is the randomness of secrets and jtis (crypto/rand when nil).
	Rand io.Reader
	// Logger receives request errors (slog.Default when nil).
	Logger *slog.Logger
	// Metrics serves http.metrics.endpoint behind bearer auth when
	// http.metrics.enabled; nil answers 404.
	Metrics http.Handler
	// Observe is called once per request (CORS preflights included, /ui
	// excluded) with the route's path pattern ("/streams/{stream_id}"; ""
	// when none matched), method,
	// status and duration; nil is a no-op.
	Observe func(route, method string, status int, d time.Duration)
	// WebUI is the console's file tree served under /ui when
	// http.web_ui is set; nil answers 404.
	WebUI fs.FS
	// WebUICSP, when set, is sent as Content-Security-Policy on /ui
	// answers.
	WebUICSP string
	// EffectiveConfig returns the configuration GET /config shows (the
	// broker's, with the bound addresses); nil answers 404. It is called
	// once per request.
	EffectiveConfig func() config.Config
	// Cluster is the cluster (cluster.go); nil on a single node.
	Cluster Cluster
	// ClusterSecret is cluster.auth.shared_secret when cluster auth is
	// on: with no http.jwt secret configured the JWT key is derived from
	// it (ClusterJWTKey), so tokens hold on every node and followers relay
	// metadata writes to the leader.
	ClusterSecret []byte
	// PartitionTiers adds to GET topic each partition's local and remote
	// bytes (PARTITION_TIERS, tiers.go); the broker sets it when tiered
	// storage is on.
	PartitionTiers bool
	// TokenLog, when set, takes the revocations of logouts (the broker's
	// metadata plane: durable, and replicated to every node in cluster
	// mode); nil keeps them in the node's own list (Revocations).
	TokenLog TokenLog
}

// Server is the HTTP API as an http.Handler.
type Server struct {
	opts       Options
	cfg        config.HTTPConfig
	disp       *dispatch.Dispatcher
	authn      *auth.Authenticator
	now        func() time.Time
	log        *slog.Logger
	tokens     *Tokens
	revoked    *Revocations
	sessions   *sessionTable
	readClient wire.Uint128
	routes     []*route
	mux        *http.ServeMux
	handler    http.Handler
	cors       *corsPolicy
	// forward relays metadata writes to the leader (cluster mode with a
	// JWT key shared by every node; nil otherwise).
	forward *forwarder
	// produces and polls recycle the buffers of the message routes
	// (*produceState, *pollBuffers).
	produces, polls sync.Pool
}

// New builds the API over opts.
func New(opts Options) (*Server, error) {
	if opts.Dispatcher == nil || opts.Authenticator == nil {
		return nil, fmt.Errorf("httpapi: Dispatcher and Authenticator are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	js, err := NewJWTSettings(opts.Config.JWT, opts.Rand)
	if err != nil {
		return nil, err
	}
	configured, _ := opts.Config.JWT.JWTKey()
	sharedKey := len(configured) > 0
	if !sharedKey && len(opts.ClusterSecret) > 0 {
		js.Key, sharedKey = ClusterJWTKey(opts.ClusterSecret), true
	}
	path := ""
	if opts.DataDir != "" {
		path = filepath.Join(opts.DataDir, filepath.FromSlash(RevocationsFile))
	}
	rev, err := OpenRevocations(path, opts.Now, DefaultMaxRevoked, js.Lifetime+js.ClockSkew, js.ClockSkew, opts.TokenLog)
	if err != nil {
		return nil, err
	}
	max := opts.ClientsTableMax / 2
	if max < 1 {
		max = 1
	}
	s := &Server{
		opts: opts, cfg: opts.Config, disp: opts.Dispatcher, authn: opts.Authenticator,
		now: opts.Now, log: opts.Logger, tokens: NewTokens(js, opts.Now, opts.Rand), revoked: rev,
		sessions:   newSessionTable(opts.Dispatcher.Sessions(), opts.Now, max),
		readClient: newClientID(),
		cors:       newCORS(opts.Config.CORS),
	}
	if opts.Cluster != nil && sharedKey {
		s.forward = newForwarder(opts.Config.TLS.Enabled, opts.Config.TLS.CertFile)
	}
	s.routes = s.table()
	if err := s.register(); err != nil {
		return nil, err
	}
	s.handler = s.outer(s.mux)
	return s, nil
}

// register puts every route on a new mux. A pattern the mux refuses (a
// metrics endpoint that collides with a route, or an invalid one) is an
// error instead of the mux's panic.
func (s *Server) register() (err error) {
	s.mux = http.NewServeMux()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("httpapi: route table: %v", r)
		}
	}()
	for _, rt := range s.routes {
		s.mux.Handle(rt.Method+" "+rt.Pattern, s.wrap(rt))
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Tokens returns the JWT signer (tests and tools mint tokens with it).
func (s *Server) Tokens() *Tokens { return s.tokens }

// Revocations returns the revocation list.
func (s *Server) Revocations() *Revocations { return s.revoked }

// statusWriter records the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// outer is the layer every request passes: observation, CORS (which
// answers every OPTIONS when enabled), and JSON answers for unknown
// routes (404) and wrong methods (405).
func (s *Server) outer(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		sw := &statusWriter{ResponseWriter: w}
		h, pattern := mux.Handler(r)
		ui := isUIPath(r.URL.Path)
		defer func() {
			if s.opts.Observe != nil && !ui {
				st := sw.status
				if st == 0 {
					st = http.StatusOK
				}
				route := pattern
				if i := strings.IndexByte(route, ' '); i >= 0 {
					route = route[i+1:]
				}
				s.opts.Observe(route, r.Method, st, s.now().Sub(start))
			}
		}()
		if s.cors != nil && !ui {
			if s.cors.handle(sw, r) {
				return
			}
		}
		if pattern == "" {
			s.unmatched(sw, r, h)
			return
		}
		if !cleanPath(r.URL.Path) {
			// The mux would redirect to the cleaned path; routing is
			// exact, so such a path is not found.
			writeError(sw, r, errNotFound())
			return
		}
		// ServeHTTP (not h) so the request carries its pattern and path
		// values.
		mux.ServeHTTP(sw, r)
	})
}

// unmatched answers a request no route matched: the mux's own 404 or 405
// (with its Allow header) as a JSON error body.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusMethodNotAllowed:
		if a := probe.header.Get("Allow"); a != "" {
			w.Header().Set("Allow", a)
		}
		writeError(w, r, httpError(http.StatusMethodNotAllowed, "method_not_allowed", "Method not allowed"))
	case http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusFound:
		// Paths with empty or dot segments: exact routing, so not found.
		writeError(w, r, errNotFound())
	default:
		writeError(w, r, errNotFound())
	}
}

// probeWriter captures what a mux fallback handler would answer.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }
func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
func (p *probeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}

// cleanPath reports whether p has no empty, "." or ".." segments (a
// trailing slash is allowed).
func cleanPath(p string) bool {
	c := path.Clean(p)
	return c == p || c+"/" == p
}

func isUIPath(p string) bool { return p == "/ui" || len(p) >= 4 && p[:4] == "/ui/" }
