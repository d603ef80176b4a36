// Package broker assembles a running server from a configuration: the
// metadata store (users, streams, topics, the client table; root user on
// first start), the session plane, the dispatcher with every handler, and
// the TCP, QUIC and WebSocket listeners (transports.go), plus the
// background work: the heartbeat verifier, the PAT cleaner and the
// consumer-group revocation timer. The public package server is a thin
// facade over it; internal tests use its options to inject a clock (and
// its timers), cheap password hashing and consumer-group membership. In
// cluster mode it also builds the replication node from [cluster]
// (cluster_node.go) and gives the metadata group its state machine
// (metadata_machine.go); each partition group's machine is the partition
// plane's replica of it (internal/partition/replicated).
package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/httpapi"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/tier"
	"github.com/iggo-dev/iggo/internal/transport/quic"
	"github.com/iggo-dev/iggo/internal/transport/tcp"
	"github.com/iggo-dev/iggo/internal/transport/ws"
	"github.com/iggo-dev/iggo/wire"
)

// Version is the server build version sent in login replies.
const Version = "0.1.0"

// DefaultShutdownTimeout bounds the graceful shutdown Run performs when
// its context ends.
const DefaultShutdownTimeout = 10 * time.Second

// Option configures a Broker.
type Option func(*options)

type options struct {
	logger   *slog.Logger
	now      func() time.Time
	after    func(time.Duration) <-chan time.Time
	params   auth.Params
	rootUser string
	rootPass string
	rootSet  bool
	inGroup  func(wire.Uint128) bool
	// Partition plane (partition.go).
	topics    func(catalog.Data) catalog.Topics
	retention time.Duration
	data      catalog.Data
	snapEach  int
	// compactEvery is the metadata raft log's compaction period (cluster.go).
	compactEvery uint64
	// fileLimit reads the descriptor use and limit (fdroom.go).
	fileLimit FileLimit
	httpOptions
	obs observeOptions // observe.go
}

// WithData replaces the partition plane the metadata store drives (the
// broker's own internal/partition plane when unset); tests pass a fake.
func WithData(d catalog.Data) Option { return func(o *options) { o.data = d } }

// WithSnapshotEvery sets the number of metadata entries between snapshots
// (metadata.DefaultSnapshotEvery otherwise).
func WithSnapshotEvery(n int) Option { return func(o *options) { o.snapEach = n } }

// WithLogger sets the logger (slog.Default otherwise).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock sets the clock used for heartbeats, token expiry, message
// timestamps and consumer-group revocation deadlines.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithAfter sets how the consumer-group revocation timer waits on the
// WithClock clock (time.After otherwise); a test passes a fake clock's
// After together with its Now so no test waits on the wall clock.
func WithAfter(after func(time.Duration) <-chan time.Time) Option {
	return func(o *options) { o.after = after }
}

// WithPasswordParams sets the Argon2id cost of new password hashes
// (auth.DefaultParams otherwise); tests use cheap parameters.
func WithPasswordParams(p auth.Params) Option { return func(o *options) { o.params = p } }

// WithRootCredentials sets the root user's credentials instead of reading
// IGGY_ROOT_USERNAME/IGGY_ROOT_PASSWORD from the environment.
func WithRootCredentials(username, password string) Option {
	return func(o *options) { o.rootUser, o.rootPass, o.rootSet = username, password, true }
}

// WithGroupMembership replaces the consumer-group membership test used by
// the stale-client verifier (the metadata store's by default).
func WithGroupMembership(f func(wire.Uint128) bool) Option {
	return func(o *options) { o.inGroup = f }
}

// Broker is a configured server.
type Broker struct {
	cfg      config.Config
	opts     options
	log      *slog.Logger
	meta     *metadata.Store
	hasher   *auth.Hasher
	sessions *session.Manager
	disp     *dispatch.Dispatcher
	tcp      *tcp.Server
	quic     *quic.Server // nil when disabled (transports.go)
	ws       *ws.Server   // nil when disabled (transports.go)
	parts    *partition.Plane
	// tier is the remote tier (tier.go), nil unless tiered_storage is
	// enabled.
	tier *tier.Manager
	obs  observability // metrics and telemetry (observe.go)
	// http and httpAPI are the HTTP API (http.go), nil when disabled.
	http    *httpapi.Listener
	httpAPI *httpapi.Server
	// cl is the replication stack in cluster mode (cluster.go), nil on
	// a single node.
	cl *cluster

	runMu   sync.Mutex
	started bool               // guarded by runMu
	stopped bool               // guarded by runMu: Shutdown has begun
	cancel  context.CancelFunc // stops background work; guarded by runMu
	bg      sync.WaitGroup
	done    chan struct{}
	// serving is closed once Run has started every listener and logged
	// its "listening" line (Serving).
	serving chan struct{}
	// fatal ends Run with an error (cluster mode: this node's metadata
	// raft log is unusable).
	fatal   chan error
	stopErr error
	once    sync.Once
	// startTime is when New was called (GET_STATS start_time).
	startTime time.Time
}

// New validates cfg, prepares the data directory, creates the root user
// and binds the listener. Serving starts with Run.
func New(cfg config.Config, opt ...Option) (*Broker, error) {
	o := options{logger: slog.Default(), now: time.Now, params: auth.DefaultParams}
	for _, f := range opt {
		f(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	b := &Broker{cfg: cfg, opts: o, log: o.logger, done: make(chan struct{}), serving: make(chan struct{}), fatal: make(chan error, 1), startTime: time.Now()}
	if err := b.prepareClusterConfig(); err != nil {
		return nil, err
	}
	cfg = b.cfg
	b.observe()
	if err := os.MkdirAll(cfg.System.Path, 0o750); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	b.hasher = auth.NewHasher(o.params, nil)
	if err := b.newPartitions(); err != nil {
		return nil, err
	}
	if o.data == nil {
		o.data = b.parts
	}
	if err := b.openCluster(); err != nil {
		b.closePartitions()
		return nil, err
	}
	if b.cl != nil && o.data == catalog.Data(b.parts) {
		// Counters of partitions held on other nodes come from them.
		o.data = clusterData{Plane: b.parts, b: b}
	}
	opened := false
	defer func() {
		if !opened {
			b.closeCluster()
		}
	}()
	var repl metadata.Replicator
	var clusterID wire.Uint128
	var onRoster func([]byte)
	var placer metadata.Placer
	var onPlacement func()
	if b.cl != nil {
		repl, clusterID, onRoster, placer, onPlacement = metadataReplicator{b}, b.cl.id, b.applyRoster, partitionPlacer{b}, b.placementApplied
	}
	meta, err := metadata.Open(metadata.Config{
		Dir:                filepath.Join(cfg.System.Path, MetadataDir),
		Now:                o.now,
		Logger:             b.log.With("component", "metadata"),
		Data:               o.data,
		Hasher:             b.hasher,
		ClientsTableMax:    cfg.Metadata.ClientsTableMax,
		MaxTokensPerUser:   cfg.PersonalAccessToken.MaxTokensPerUser,
		SnapshotEvery:      o.snapEach,
		RebalancingTimeout: cfg.ConsumerGroup.RebalancingTimeout.Std(),
		After:              o.after,
		Replicator:         repl,
		ClusterID:          clusterID,
		OnRoster:           onRoster,
		Placer:             placer,
		OnPlacement:        onPlacement,
		Root: func() (string, string, error) {
			// Read only on first start: once metadata exists the stored
			// root wins (semantics.md §2.1).
			if o.rootSet {
				return o.rootUser, o.rootPass, nil
			}
			return config.RootCredentials(os.Environ())
		},
	})
	if err != nil {
		b.closePartitions()
		if ce, ok := errors.AsType[*metadata.CorruptError](err); ok {
			return nil, damagedMetadata(cfg.System.Path, ce)
		}
		return nil, fmt.Errorf("open metadata: %w", err)
	}
	b.meta = meta
	if b.cl != nil {
		b.cl.moves = b.newMoves()
		if err := b.obs.metrics.SetClusterSource(clusterMetrics{b}); err != nil {
			b.log.Warn("cluster metrics not registered", "err", err)
		}
	}
	if b.tier != nil {
		if err := b.obs.metrics.SetTierSource(b.tier); err != nil {
			b.log.Warn("tiered storage metrics not registered", "err", err)
		}
	}
	if err := b.joinMetadataGroup(); err != nil {
		meta.Close()
		b.closePartitions()
		return nil, err
	}
	if err := b.parts.KeyError(); err != nil {
		meta.Close()
		b.closePartitions()
		return nil, err
	}
	if b.cl == nil {
		// In a cluster the raft log may still hold the entries that
		// created a directory: nothing is swept before they are applied.
		b.sweepOrphans()
	}
	if o.inGroup == nil {
		o.inGroup = meta.InGroup
	}
	authn := auth.NewAuthenticator(meta, b.hasher, o.now)
	b.sessions = session.NewManager(authn, meta, meta.Table(), session.Options{
		Now: o.now, Logger: b.log.With("component", "session"), ServerVersion: Version, InGroup: o.inGroup,
	})
	dopts := dispatch.Options{Logger: b.log.With("component", "dispatch"), Groups: meta.ClientGroups, Observer: b.requestObserver()}
	sys := metadata.System{
		Version: Version, Started: b.startTime, DataDir: cfg.System.Path,
		ConfigFile: filepath.Join(cfg.System.Path, cfg.System.Runtime.Path, "current_config.toml"),
		TCPAddr:    b.Addr,
		LogFile:    logFile(cfg),
		QUICAddr:   b.QUICAddr, WebSocketAddr: b.WebSocketAddr,
		HTTPAddr: b.HTTPAddr,
	}
	if b.cl != nil {
		dopts.MetadataLeader = b.metadataLeader
		dopts.LoginReady = meta.Bootstrapped
		dopts.Retried = meta.AwaitRetried
		sys.ClusterMetadata = b.clusterMetadata
		sys.PartitionRoom = b.partitionRoom
	}
	b.disp = dispatch.New(b.sessions, meta, dopts)
	meta.Register(b.disp, sys)
	b.parts.Register(b.disp)
	if b.cl != nil {
		b.registerClusterAdmin()
		b.registerClusterPartitions()
		b.registerConsumerRouting()
	}
	topics := catalog.Topics(meta)
	if b.opts.topics != nil {
		topics = b.opts.topics(b.parts)
	}
	b.parts.SetTopics(topics)
	b.registerPartitionTiers(topics)
	if b.cl != nil {
		b.cl.node.host.HandleCall(callForward, b.parts.ServeForwarded)
		b.cl.node.host.HandleCall(callStats, b.serveStats)
		b.cl.node.host.HandleCall(callLeave, b.parts.ServeLeave)
	}
	if cfg.TCP.Enabled {
		var tlsCfg *tls.Config
		if cfg.TCP.TLS.Enabled {
			if tlsCfg, err = loadTLS(cfg.TCP.TLS, o.now); err != nil {
				meta.Close()
				b.closePartitions()
				return nil, fmt.Errorf("tcp.tls: %w", err)
			}
		}
		b.tcp, err = tcp.Listen(tcp.Config{
			Address:          cfg.TCP.Address,
			TLS:              tlsCfg,
			MaxConnections:   cfg.TCP.MaxConnections,
			MaxFrameSize:     uint32(cfg.MessageBus.MaxMessageSize),
			FrameReadTimeout: cfg.TCP.FrameReadTimeout.Std(),
			WriteTimeout:     cfg.TCP.WriteTimeout.Std(),
			Logger:           b.log.With("component", "tcp"),
		}, b.disp)
		if err != nil {
			meta.Close()
			b.closePartitions()
			return nil, fmt.Errorf("listen on %s: %w", cfg.TCP.Address, err)
		}
	}
	if err := b.listenTransports(); err != nil {
		if b.tcp != nil {
			b.tcp.Shutdown(context.Background())
		}
		meta.Close()
		b.closePartitions()
		return nil, err
	}
	if err := b.listenHTTP(); err != nil {
		b.closeTransports()
		if b.tcp != nil {
			b.tcp.Shutdown(context.Background())
		}
		meta.Close()
		b.closePartitions()
		return nil, err
	}
	if err := b.writeRuntimeConfig(); err != nil {
		b.log.Warn("could not write the effective configuration", "err", err)
	}
	opened = true
	return b, nil
}

// writeRuntimeConfig writes the effective configuration, with the bound
// address, to {system.path}/{system.runtime.path}/current_config.toml. The
// file is replaced atomically (temporary file, then rename), so a reader
// such as a tool waiting for the bound address never sees half of it.
func (b *Broker) writeRuntimeConfig() error {
	c := b.boundConfig()
	data, err := c.Encode()
	if err != nil {
		return err
	}
	dir := filepath.Join(c.System.Path, c.System.Runtime.Path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	final := filepath.Join(dir, "current_config.toml")
	tmp := final + ".tmp"
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, final)
}

// Addr is the TCP listen address (nil when TCP is disabled).
func (b *Broker) Addr() net.Addr {
	if b.tcp == nil {
		return nil
	}
	return b.tcp.Addr()
}

// MetadataDir is the metadata directory under system.path.
const MetadataDir = "metadata"

// Users is the metadata store, which is also the user and token store.
func (b *Broker) Users() *metadata.Store { return b.meta }

// Metadata is the metadata store.
func (b *Broker) Metadata() *metadata.Store { return b.meta }

// Hasher is the password hasher.
func (b *Broker) Hasher() *auth.Hasher { return b.hasher }

// Sessions is the session manager.
func (b *Broker) Sessions() *session.Manager { return b.sessions }

// Dispatcher is the command dispatcher (later steps register handlers).
func (b *Broker) Dispatcher() *dispatch.Dispatcher { return b.disp }

// Connections is the number of open client connections.
func (b *Broker) Connections() int {
	n := b.transportConnections()
	if b.tcp != nil {
		n += b.tcp.Connections()
	}
	return n
}

// Run serves until ctx ends or Shutdown is called. When ctx ends it shuts
// down gracefully (bounded by DefaultShutdownTimeout) and returns nil.
func (b *Broker) Run(ctx context.Context) error {
	b.runMu.Lock()
	if b.started {
		b.runMu.Unlock()
		return errors.New("broker: Run called twice")
	}
	b.started = true
	if b.stopped {
		b.runMu.Unlock()
		<-b.done
		return b.stopErr
	}
	bgCtx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	if b.cfg.Heartbeat.Enabled {
		b.bg.Add(1)
		go func() {
			defer b.bg.Done()
			b.sessions.RunHeartbeat(bgCtx, b.cfg.Heartbeat.Interval.Std())
		}()
	}
	// Pending consumer-group revocations complete at their deadline
	// (semantics.md §6.3 step 4).
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		b.meta.RunRevocations(bgCtx)
	}()
	if c := b.cfg.PersonalAccessToken.Cleaner; c.Enabled {
		b.bg.Add(1)
		go func() {
			defer b.bg.Done()
			b.meta.RunPATCleaner(bgCtx, c.Interval.Std())
		}()
	}
	if b.cl != nil {
		b.bg.Add(3)
		go func() {
			defer b.bg.Done()
			b.runCluster(bgCtx)
		}()
		go func() {
			defer b.bg.Done()
			b.cl.moves.run(bgCtx)
		}()
		go func() {
			defer b.bg.Done()
			b.watchGroupFailures(bgCtx)
		}()
	}
	b.runMu.Unlock()
	b.startTelemetry()

	serveErr := make(chan error, 4) // one per listener
	b.serveTransports(serveErr)
	b.serveHTTP(serveErr)
	if b.tcp != nil {
		b.log.Info("iggo server listening", "transport", transportName(b.cfg), "address", b.tcp.Addr().String(), "data", b.cfg.System.Path)
		go func() { serveErr <- b.tcp.Serve() }()
	}
	close(b.serving)
	select {
	case <-ctx.Done():
		sctx, scancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
		defer scancel()
		return b.Shutdown(sctx)
	case err := <-serveErr:
		if err != nil {
			// One listener failed: stop the others and close the planes
			// cleanly before reporting it.
			sctx, scancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
			defer scancel()
			if serr := b.Shutdown(sctx); serr != nil {
				b.log.Warn("shutdown after a listener failed", "err", serr)
			}
			return err
		}
		<-b.done
		return b.stopErr
	case err := <-b.fatal:
		sctx, scancel := context.WithTimeout(context.Background(), DefaultShutdownTimeout)
		defer scancel()
		if serr := b.Shutdown(sctx); serr != nil {
			b.log.Warn("shutdown after a fatal cluster error", "err", serr)
		}
		return err
	case <-b.done:
		return b.stopErr
	}
}

func transportName(cfg config.Config) string {
	if cfg.TCP.TLS.Enabled {
		return "tcp+tls"
	}
	return "tcp"
}

// Shutdown stops accepting connections, finishes in-flight requests,
// flushes replies, closes connections and stops background work. It is
// safe to call more than once and before Run.
func (b *Broker) Shutdown(ctx context.Context) error {
	b.once.Do(func() {
		var errs []error
		if b.tcp != nil {
			if err := b.tcp.Shutdown(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, b.shutdownTransports(ctx)...)
		if err := b.shutdownHTTP(ctx); err != nil {
			errs = append(errs, err)
		}
		b.runMu.Lock()
		b.stopped = true
		if b.cancel != nil {
			b.cancel()
		}
		b.runMu.Unlock()
		b.bg.Wait()
		errs = append(errs, b.stopTelemetry(ctx)...)
		if err := b.closeCluster(); err != nil {
			errs = append(errs, fmt.Errorf("stop cluster node: %w", err))
		}
		if err := b.closePartitions(); err != nil {
			errs = append(errs, err)
		}
		if err := b.meta.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close metadata: %w", err))
		}
		b.stopErr = errors.Join(errs...)
		b.log.Info("iggo server stopped")
		close(b.done)
	})
	select {
	case <-b.done:
		return b.stopErr
	case <-ctx.Done():
		return ctx.Err()
	}
}
