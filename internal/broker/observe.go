package broker

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/metrics"
	"github.com/iggo-dev/iggo/internal/telemetry"
)

// WithTelemetry makes the broker record its request spans with p, a
// Provider the caller built from the same configuration (usually to fan
// its log handler into the process logger too). The caller shuts p down
// after the broker stopped. Without this option and with
// telemetry.enabled the broker builds and owns its own Provider when Run
// starts, and also exports its own log records through it.
func WithTelemetry(p *telemetry.Provider) Option {
	return func(o *options) { o.obs.telemetry, o.obs.telemetrySet = p, true }
}

// observeOptions are the options of this file.
type observeOptions struct {
	telemetry    *telemetry.Provider
	telemetrySet bool
}

// observability is the broker's metrics registry and telemetry state.
type observability struct {
	metrics *metrics.Registry
	// plainLog is the logger without the OpenTelemetry fan-out (export
	// errors go there, never back into the exporter).
	plainLog *slog.Logger
	// own is the Provider Run built (nil when given by WithTelemetry or
	// disabled); late hands it to the request path and the log tee.
	own  *telemetry.Provider
	late lateTelemetry
}

// observe builds the metrics registry and, when the broker will own the
// telemetry Provider, tees b.log to it. It runs first in New, before any
// component captures the logger or the storage hook.
func (b *Broker) observe() {
	b.obs.plainLog = b.log
	b.obs.metrics = metrics.New(metrics.Options{Source: metrics.SourceFunc(b.sampleMetrics), Logger: b.log})
	if b.ownsTelemetry() {
		b.log = slog.New(&teeHandler{primary: b.log.Handler(), late: &b.obs.late})
	}
}

// ownsTelemetry reports whether Run builds the Provider.
func (b *Broker) ownsTelemetry() bool { return !b.opts.obs.telemetrySet && b.cfg.Telemetry.Enabled }

// Metrics is the broker's Prometheus registry (the HTTP API serves its
// Handler at http.metrics.endpoint and reports requests to ObserveHTTP).
func (b *Broker) Metrics() *metrics.Registry { return b.obs.metrics }

// metricsHandler is what the HTTP API serves at http.metrics.endpoint:
// the WithHTTPMetrics handler when given, else the registry's.
func (b *Broker) metricsHandler() http.Handler {
	if b.opts.httpMetrics != nil {
		return b.opts.httpMetrics
	}
	return b.obs.metrics.Handler()
}

// metricsObserve is the HTTP API's per-request hook: the WithHTTPObserve
// function when given, else the registry's ObserveHTTP
// (http_requests_total and the per-route latency histogram).
func (b *Broker) metricsObserve() func(route, method string, status int, d time.Duration) {
	if b.opts.httpObserve != nil {
		return b.opts.httpObserve
	}
	return b.obs.metrics.ObserveHTTP
}

// Telemetry is the Provider spans are recorded with (nil when telemetry
// is disabled, or before Run built the broker's own).
func (b *Broker) Telemetry() *telemetry.Provider {
	if b.opts.obs.telemetrySet {
		return b.opts.obs.telemetry
	}
	return b.obs.late.p.Load()
}

// requestObserver is the dispatcher's Observer: the metrics registry and,
// only when telemetry is on, the span recorder. With telemetry off the
// tracing code is not on the request path at all.
func (b *Broker) requestObserver() dispatch.Observer {
	switch {
	case b.opts.obs.telemetrySet && b.opts.obs.telemetry != nil:
		return dispatch.Observers{b.obs.metrics, b.opts.obs.telemetry.Observer()}
	case b.ownsTelemetry():
		return dispatch.Observers{b.obs.metrics, &b.obs.late}
	}
	return b.obs.metrics
}

// startTelemetry builds the broker's own Provider (Run) and starts the
// OTLP mirror of the metrics registry (telemetry.metrics.endpoint) on
// whichever Provider is in use. A failure is logged and the server serves
// without that part of telemetry.
func (b *Broker) startTelemetry() {
	if b.opts.obs.telemetrySet {
		if p := b.opts.obs.telemetry; p != nil {
			b.mirrorMetrics(p)
			b.logTelemetryOn()
		}
		return
	}
	if !b.ownsTelemetry() || b.obs.own != nil {
		return
	}
	p, err := telemetry.New(context.Background(), b.cfg.Telemetry, telemetry.Options{Version: Version, Logger: b.obs.plainLog})
	if err != nil {
		b.log.Warn("telemetry disabled: could not build the OTLP exporters", "err", err)
		return
	}
	b.obs.own = p
	b.obs.late.p.Store(p)
	b.mirrorMetrics(p)
	b.logTelemetryOn()
}

// logTelemetryOn says where telemetry goes.
func (b *Broker) logTelemetryOn() {
	t := b.cfg.Telemetry
	metricsTo := "off"
	if t.Metrics.Endpoint != "" {
		metricsTo = t.Metrics.Transport + " " + t.Metrics.Endpoint
	}
	b.log.Info("telemetry export on", "service_name", t.ServiceName,
		"traces", t.Traces.Transport+" "+t.Traces.Endpoint, "logs", t.Logs.Transport+" "+t.Logs.Endpoint,
		"metrics", metricsTo, "sample_ratio", float64(t.Traces.SampleRatio))
}

// mirrorMetrics starts p's periodic OTLP export of the registry.
func (b *Broker) mirrorMetrics(p *telemetry.Provider) {
	if err := p.StartMetrics(context.Background(), b.obs.metrics.Gatherer()); err != nil {
		b.log.Warn("telemetry: metrics export not started", "err", err)
	}
}

// stopTelemetry flushes and stops the broker's own Provider (Shutdown).
// It returns no error: a failed last flush is logged, so a collector that
// is down never fails the server's stop.
func (b *Broker) stopTelemetry(ctx context.Context) []error {
	p := b.obs.own
	if p == nil {
		return nil
	}
	b.obs.late.p.Store(nil)
	// A collector that is down must not fail or stall the server's stop:
	// the last flush is bounded and its failure only logged.
	ctx, cancel := context.WithTimeout(ctx, telemetryStopTimeout)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		b.obs.plainLog.Warn("telemetry: final flush incomplete", "err", err)
	}
	return nil
}

// telemetryStopTimeout bounds the final telemetry flush at shutdown.
const telemetryStopTimeout = 3 * time.Second

// lateTelemetry forwards to the Provider Run builds; until then (and
// after Shutdown) it drops observations.
type lateTelemetry struct {
	p atomic.Pointer[telemetry.Provider]
}

// Observe implements dispatch.Observer.
func (l *lateTelemetry) Observe(o dispatch.Observation) {
	if p := l.p.Load(); p != nil {
		p.Observer().Observe(o)
	}
}

// sampleMetrics is the metrics Source: counts and names from the
// committed metadata, counters and offsets from the partition plane,
// connections from the session plane. It runs per scrape, never on the
// request path.
func (b *Broker) sampleMetrics() metrics.Sample {
	var s metrics.Sample
	if b.meta == nil || b.sessions == nil {
		return s // New has not finished
	}
	conns := b.sessions.Conns()
	s.Clients = uint64(len(conns))
	s.Connections = map[string]int{}
	for _, c := range conns {
		s.Connections[metrics.TransportName(c.Transport)]++
	}
	inv := b.meta.Inventory()
	s.Streams, s.Users, s.Topics = uint64(inv.Streams), uint64(inv.Users), uint64(len(inv.Topics))
	var data catalog.Data = b.parts
	if b.opts.data != nil {
		data = b.opts.data
	}
	own := b.opts.data == nil // the broker's own plane has traffic and group offsets
	if own {
		for _, pd := range b.parts.DamagedPartitions() {
			s.DamagedRecords += pd.DamagedRecords()
		}
	}
	for _, t := range inv.Topics {
		s.Partitions += uint64(len(t.Partitions))
		stats := make([]catalog.PartitionStats, len(t.Partitions))
		for i, pid := range t.Partitions {
			stats[i] = data.PartitionStats(t.Ref, pid)
			s.Segments += uint64(stats[i].Segments)
			s.Messages += stats[i].Messages
		}
		if !own {
			continue
		}
		tr := b.parts.Traffic(t.Ref)
		s.Traffic = append(s.Traffic, metrics.TopicTraffic{Stream: t.StreamName, Topic: t.Name,
			MessagesIn: tr.MessagesIn, BytesIn: tr.BytesIn, MessagesOut: tr.MessagesOut, BytesOut: tr.BytesOut})
		for _, g := range t.Groups {
			for i, pid := range t.Partitions {
				committed, ok := b.parts.GroupOffset(t.Ref, pid, g.ID)
				s.Lag = append(s.Lag, metrics.GroupLag{Stream: t.StreamName, Topic: t.Name, Group: g.Name, Partition: pid,
					Lag: metrics.Lag(stats[i].CurrentOffset, stats[i].Messages, committed, ok)})
			}
		}
	}
	return s
}

// teeHandler sends every record its primary handler accepts also to the
// OpenTelemetry log handler once Run has built it, replaying the
// WithAttrs/WithGroup calls made before that.
type teeHandler struct {
	primary slog.Handler
	late    *lateTelemetry
	ops     []func(slog.Handler) slog.Handler
	derived atomic.Pointer[derivedHandler]
}

// derivedHandler is the OpenTelemetry handler with ops applied, for one
// Provider.
type derivedHandler struct {
	p *telemetry.Provider
	h slog.Handler
}

// Enabled implements slog.Handler: the primary's level filter decides.
func (t *teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.primary.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (t *teeHandler) Handle(ctx context.Context, r slog.Record) error {
	err := t.primary.Handle(ctx, r)
	if p := t.late.p.Load(); p != nil {
		d := t.derived.Load()
		if d == nil || d.p != p {
			h := p.LogHandler()
			for _, op := range t.ops {
				h = op(h)
			}
			d = &derivedHandler{p: p, h: h}
			t.derived.Store(d)
		}
		_ = d.h.Handle(ctx, r)
	}
	return err
}

// WithAttrs implements slog.Handler.
func (t *teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return t.with(t.primary.WithAttrs(as), func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

// WithGroup implements slog.Handler.
func (t *teeHandler) WithGroup(name string) slog.Handler {
	return t.with(t.primary.WithGroup(name), func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (t *teeHandler) with(primary slog.Handler, op func(slog.Handler) slog.Handler) *teeHandler {
	ops := append(append([]func(slog.Handler) slog.Handler(nil), t.ops...), op)
	return &teeHandler{primary: primary, late: t.late, ops: ops}
}
