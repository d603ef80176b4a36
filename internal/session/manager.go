package session

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// StaleFactor is the multiple of the heartbeat interval after which a
// bound connection without requests is stale (semantics.md §1.10: 1.2).
const StaleFactor = 1.2

// Options configure a Manager.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger receives session events (slog.Default when nil).
	Logger *slog.Logger
	// ServerVersion is the build version sent in login replies.
	ServerVersion string
	// InGroup reports whether a client is a member of at least one
	// consumer group; only such clients are evicted as stale
	// (semantics.md §1.10). Nil means no client is (no groups exist yet).
	InGroup func(client wire.Uint128) bool
	// OnLogout runs after a Logout of client is committed (consumer-group
	// cleanup plugs in here).
	OnLogout func(client wire.Uint128)
}

// Manager is the registry of live connections and the session plane's
// operations on them.
type Manager struct {
	auth  *auth.Authenticator
	log   Log
	table Table
	opts  Options

	mu     sync.RWMutex
	conns  map[uint32]*Conn // guarded by mu
	nextID uint32           // guarded by mu
}

// NewManager returns a Manager that authenticates with a, commits
// Register/Logout entries to log and checks metadata requests against
// table (log must apply its entries to table).
func NewManager(a *auth.Authenticator, log Log, table Table, opts Options) *Manager {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Manager{auth: a, log: log, table: table, opts: opts, conns: map[uint32]*Conn{}}
}

// Table returns the client table.
func (m *Manager) Table() Table { return m.table }

// Now returns the manager's clock reading.
func (m *Manager) Now() time.Time { return m.opts.Now() }

// Open registers a new connection and assigns its transport client id.
func (m *Manager) Open(t Transport, addr string, sink Sink) *Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		m.nextID++
		if m.nextID == 0 {
			continue
		}
		if _, used := m.conns[m.nextID]; !used {
			break
		}
	}
	c := &Conn{ID: m.nextID, Transport: t, Addr: addr, sink: sink}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lastSeen.Store(m.opts.Now().UnixNano())
	m.conns[c.ID] = c
	return c
}

// Close unregisters c. When it was bound, a Logout is committed on the
// client's behalf (synthetic request id, semantics.md §1.9) unless
// keepSession is set (server shutdown keeps sessions for a restart) or the
// connection was attached to another connection's session (Attach).
func (m *Manager) Close(c *Conn, keepSession bool) {
	m.mu.Lock()
	delete(m.conns, c.ID)
	m.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	if b, ok := c.unbind(); ok && !keepSession && !b.Attached {
		m.commitLogout(b, SyntheticLogoutRequest)
	}
}

// Conn returns the live connection with transport id id.
func (m *Manager) Conn(id uint32) (*Conn, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.conns[id]
	return c, ok
}

// Conns returns the live connections ordered by id.
func (m *Manager) Conns() []*Conn {
	m.mu.RLock()
	out := make([]*Conn, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Len is the number of live connections.
func (m *Manager) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.conns)
}

// Touch records a request on c: every request is a heartbeat
// (semantics.md §1.10).
func (m *Manager) Touch(c *Conn) { c.lastSeen.Store(m.opts.Now().UnixNano()) }

// LoginResult is the outcome of a login-register request: either an
// eviction, a transient rejection code, or a success reply.
type LoginResult struct {
	// Evict is non-zero when the login is refused with an eviction.
	Evict wire.EvictionReason
	// Transient is 57 or 58 when the Register could not be committed now.
	Transient uint32
	// Reply is the success payload (after the [count=0] result section).
	Reply wire.LoginRegisterReply
	// CommitOp is the log position of the Register (0 when already bound).
	CommitOp uint64
}

// Login handles LOGIN_REGISTER (40) and LOGIN_REGISTER_WITH_PAT (45) per
// semantics.md §1.4: version prefix (else eviction 15), protocol gate
// (eviction 14), password shape, then PAT shape; neither: 9 when a
// password shape was rejected, else 15.
func (m *Manager) Login(c *Conn, client wire.Uint128, body []byte) LoginResult {
	user, v, evict := m.authenticate(body)
	if evict != 0 {
		return LoginResult{Evict: evict}
	}
	reply := wire.LoginRegisterReply{ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: m.opts.ServerVersion}
	if b, bound := c.Binding(); bound {
		// Already bound: answer the existing session, register nothing (§1.4 step 5).
		reply.UserID, reply.Session = uint32(b.UserID), b.Session
		return LoginResult{Reply: reply}
	}
	e, err := m.log.Append(Entry{Kind: EntryRegister, Client: client, UserID: uint32(user.ID)})
	if err != nil {
		if errors.Is(err, ErrOutcomeUnknown) {
			return LoginResult{Transient: wire.ErrTransientNotCommitted.Code}
		}
		return LoginResult{Transient: wire.ErrTransientNotAccepted.Code}
	}
	c.setBinding(Binding{
		Client: client, Session: e.Op, UserID: user.ID,
		ProtocolVersion: v.ProtocolVersion, SDKName: v.SDKName, SDKVersion: v.SDKVersion,
	})
	m.opts.Logger.Debug("client logged in", "conn", c.ID, "addr", c.Addr, "user", uint32(user.ID), "session", e.Op, "sdk", v.SDKName)
	reply.UserID, reply.Session = uint32(user.ID), e.Op
	return LoginResult{Reply: reply, CommitOp: e.Op}
}

// authenticate checks a login body (semantics.md §1.4): version prefix
// (else eviction 15), protocol gate (eviction 14), password shape, then
// PAT shape; neither: 9 when a password shape was rejected, else 15. A
// non-zero reason refuses the login.
func (m *Manager) authenticate(body []byte) (auth.User, wire.ClientVersionInfo, wire.EvictionReason) {
	v, rest, err := wire.DecodeClientVersionInfo(body)
	if err != nil {
		return auth.User{}, v, wire.EvictMalformedLogin
	}
	if !wire.VersionAccepted(v.ProtocolVersion, wire.ProtocolVersionMin, wire.ProtocolVersion) {
		return auth.User{}, v, wire.EvictIncompatibleProtocol
	}
	var pw wire.LoginRegister
	rejected := false
	if pw.DecodeCredentials(rest) == nil {
		u, err := m.auth.Password(pw.Username, pw.Password)
		if err == nil {
			return u, v, 0
		}
		rejected = true
	}
	var pat wire.LoginRegisterWithPAT
	if pat.DecodeCredentials(rest) != nil {
		if rejected {
			return auth.User{}, v, wire.EvictInvalidCredentials
		}
		return auth.User{}, v, wire.EvictMalformedLogin
	}
	u, err := m.auth.Token(pat.Token)
	switch {
	case errors.Is(err, auth.ErrUserInactive):
		return auth.User{}, v, wire.EvictUserInactive
	case err != nil:
		return auth.User{}, v, wire.EvictInvalidToken
	}
	return u, v, 0
}

// Logout handles LOGOUT_USER (39, operation 3): an unbound connection gets
// plain success; a bound one commits a Logout and returns to Connected
// (semantics.md §1.8). An attached connection (Attach) only returns to
// Connected: the session is its owner's. A commit failure returns a
// transient status code.
func (m *Manager) Logout(c *Conn, request uint64) uint32 {
	b, ok := c.unbind()
	if !ok || b.Attached {
		return 0 // an attached connection leaves the session to its owner
	}
	if err := m.commitLogout(b, request); err != nil {
		c.setBinding(b)
		if errors.Is(err, ErrOutcomeUnknown) {
			return wire.ErrTransientNotCommitted.Code
		}
		return wire.ErrTransientNotAccepted.Code
	}
	return 0
}

// Evicted ends c's session after an eviction was sent on it: the binding
// is dropped and a Logout of that session is committed (not for an
// attached connection, whose session is another connection's). The
// Logout is fenced by epoch, so evicting a zombie does not end the
// client's newer session.
func (m *Manager) Evicted(c *Conn) {
	if b, ok := c.unbind(); ok && !b.Attached {
		m.commitLogout(b, SyntheticLogoutRequest)
	}
}

func (m *Manager) commitLogout(b Binding, request uint64) error {
	_, err := m.log.Append(Entry{Kind: EntryLogout, Client: b.Client, Session: b.Session, Request: request})
	if err != nil {
		return err
	}
	if m.opts.OnLogout != nil {
		m.opts.OnLogout(b.Client)
	}
	return nil
}

// RunHeartbeat runs the stale-client verifier every interval until ctx is
// done: a bound connection without a request for StaleFactor x interval
// whose client is in a consumer group gets Eviction(13 StaleClient), its
// session is logged out and the connection closed (semantics.md §1.10).
func (m *Manager) RunHeartbeat(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.VerifyHeartbeats(interval)
		}
	}
}

// VerifyHeartbeats runs one pass of the stale-client verifier.
func (m *Manager) VerifyHeartbeats(interval time.Duration) {
	limit := m.opts.Now().UnixNano() - int64(float64(interval)*StaleFactor)
	for _, c := range m.Conns() {
		if c.LastSeen() >= limit {
			continue
		}
		b, ok := c.Binding()
		if !ok || m.opts.InGroup == nil || !m.opts.InGroup(b.Client) {
			continue
		}
		m.opts.Logger.Info("evicting stale client", "conn", c.ID, "addr", c.Addr, "session", b.Session)
		// The Logout is committed before the client hears of the
		// eviction, so a client that reconnects at once finds its old
		// session gone.
		m.Evicted(c)
		if c.sink != nil {
			c.sink.Evict(b.Client, wire.EvictStaleClient)
		}
	}
}
