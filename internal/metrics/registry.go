package metrics

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// ContentType is the scrape answer's content type, the reference's (axum's
// default for a string body). Prometheus reads text/plain as the classic
// text format.
const ContentType = "text/plain; charset=utf-8"

// Options configure a Registry.
type Options struct {
	// Source samples the live state at scrape time (gauges, per-topic
	// counters, consumer-group lag, connections); nil reports zeros.
	Source Source
	// Raft, when set, adds the cluster families (raft.go); nil in single
	// node mode.
	Raft RaftSource
	// Logger receives scrape errors (slog.Default if nil).
	Logger *slog.Logger
	// NoRuntime leaves out the Go runtime and process collectors.
	NoRuntime bool
}

// Registry holds every metric of one server. It is safe for concurrent
// use.
type Registry struct {
	reg   *prometheus.Registry
	log   *slog.Logger
	req   *requestMetrics
	store *storageMetrics
	scrub *scrubMetrics
	http  *httpMetrics
	// writeErrors counts partition-log disk errors (storage_errors.go).
	writeErrors *prometheus.CounterVec
	// rebuild counts damaged replicas rebuilt from their peers.
	rebuild *rebuildMetrics
}

// New returns a Registry with every collector registered.
func New(opts Options) *Registry {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	r := &Registry{reg: prometheus.NewRegistry(), log: opts.Logger}
	r.req = newRequestMetrics()
	r.store = newStorageMetrics()
	r.scrub = newScrubMetrics()
	r.http = newHTTPMetrics()
	r.rebuild = newRebuildMetrics()
	r.reg.MustRegister(newStateCollector(opts.Source))
	r.req.register(r.reg)
	r.store.register(r.reg)
	r.scrub.register(r.reg)
	r.http.register(r.reg)
	r.writeErrors = newWriteErrors()
	r.reg.MustRegister(r.writeErrors)
	r.rebuild.register(r.reg)
	if opts.Raft != nil {
		r.reg.MustRegister(newRaftCollector(opts.Raft))
	}
	if !opts.NoRuntime {
		r.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return r
}

// Gatherer is the underlying registry (tests, the OpenTelemetry mirror).
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves the classic text exposition of every family with
// ContentType, whatever the request's Accept header asks for. The caller
// mounts it behind its own authentication (http.metrics.endpoint). A
// collector error is logged and the families gathered are still served.
func (r *Registry) Handler() http.Handler { return http.HandlerFunc(r.serve) }

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	mfs, err := r.reg.Gather()
	if err != nil {
		r.log.Warn("metrics: gathering failed in part", "err", err)
	}
	w.Header().Set("Content-Type", ContentType)
	if req.Method == http.MethodHead {
		return
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			r.log.Debug("metrics: writing the exposition failed", "err", err)
			return
		}
	}
}
