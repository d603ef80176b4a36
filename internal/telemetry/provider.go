package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the server's spans and logs.
const ScopeName = "github.com/iggo-dev/iggo"

// Defaults of Options.
const (
	DefaultErrorInterval = 30 * time.Second
	DefaultExportTimeout = 10 * time.Second
	DefaultBatchInterval = 5 * time.Second
)

// Options tune a Provider beyond the configuration keys.
type Options struct {
	// Version is service.version (the server version).
	Version string
	// Logger receives export errors. It must not itself export to this
	// Provider (a failing collector would feed its own error log); pass
	// the console/file logger. slog.Default if nil.
	Logger *slog.Logger
	// ErrorInterval is the least time between two export-error lines per
	// signal (DefaultErrorInterval if 0).
	ErrorInterval time.Duration
	// ExportTimeout bounds one export call, retries included
	// (DefaultExportTimeout if 0).
	ExportTimeout time.Duration
	// BatchInterval is how long spans and log records wait to be sent in
	// a batch (DefaultBatchInterval if 0).
	BatchInterval time.Duration
	// Now is the clock of the error rate limit (time.Now if nil).
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ErrorInterval <= 0 {
		o.ErrorInterval = DefaultErrorInterval
	}
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = DefaultExportTimeout
	}
	if o.BatchInterval <= 0 {
		o.BatchInterval = DefaultBatchInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Provider owns the trace and log pipelines of one server.
type Provider struct {
	cfg      config.TelemetryConfig
	opts     Options
	res      *resource.Resource
	tp       *sdktrace.TracerProvider
	lp       *sdklog.LoggerProvider
	tracer   trace.Tracer
	handler  slog.Handler
	observer *spanObserver

	metricsMu sync.Mutex
	mp        *sdkmetric.MeterProvider // StartMetrics (metrics.go); guarded by metricsMu
}

// New builds the exporters and pipelines for cfg (already validated). It
// returns nil, nil when telemetry is disabled. No connection is made
// here: an unreachable collector shows up as rate-limited export errors,
// never as a start-up failure.
func New(ctx context.Context, cfg config.TelemetryConfig, opts Options) (*Provider, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	opts.defaults()
	res := resource.NewSchemaless(
		attribute.String("service.name", cfg.ServiceName),
		attribute.String("service.version", opts.Version),
	)
	traces := cfg.Traces.Signal()
	spanExp, err := newSpanExporter(ctx, traces, opts)
	if err != nil {
		return nil, fmt.Errorf("telemetry.traces (%s %s): %w", traces.Transport, traces.Endpoint, err)
	}
	logExp, err := newLogExporter(ctx, cfg.Logs, opts)
	if err != nil {
		_ = spanExp.Shutdown(ctx)
		return nil, fmt.Errorf("telemetry.logs (%s %s): %w", cfg.Logs.Transport, cfg.Logs.Endpoint, err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(float64(cfg.Traces.SampleRatio)))),
		sdktrace.WithBatcher(spanExp, sdktrace.WithBatchTimeout(opts.BatchInterval), sdktrace.WithExportTimeout(opts.ExportTimeout)),
	)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(logExp, sdklog.WithExportInterval(opts.BatchInterval), sdklog.WithExportTimeout(opts.ExportTimeout))),
	)
	p := &Provider{
		cfg:     cfg,
		opts:    opts,
		res:     res,
		tp:      tp,
		lp:      lp,
		tracer:  tp.Tracer(ScopeName, trace.WithInstrumentationVersion(opts.Version)),
		handler: otelslog.NewHandler(ScopeName, otelslog.WithLoggerProvider(lp), otelslog.WithVersion(opts.Version)),
	}
	p.observer = &spanObserver{tracer: p.tracer}
	return p, nil
}

// LogHandler is the slog.Handler that exports every record it receives
// as an OTLP log record; the logging setup fans records out to it after
// its level filter. nil for a nil Provider.
func (p *Provider) LogHandler() slog.Handler {
	if p == nil {
		return nil
	}
	return p.handler
}

// Observer is the per-request span recorder to install in the dispatcher;
// nil for a nil Provider.
func (p *Provider) Observer() dispatch.Observer {
	if p == nil {
		return nil
	}
	return p.observer
}

// Tracer is the server's tracer (nil for a nil Provider).
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tracer
}

// Shutdown flushes what is queued (bounded by ctx) and stops the
// pipelines. Safe on a nil Provider.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	if err := p.tp.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("telemetry traces: %w", err))
	}
	if err := p.lp.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("telemetry logs: %w", err))
	}
	p.metricsMu.Lock()
	mp := p.mp
	p.metricsMu.Unlock()
	if mp != nil {
		if err := mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ForceFlush exports everything queued now (tests, shutdown).
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.metricsMu.Lock()
	mp := p.mp
	p.metricsMu.Unlock()
	var merr error
	if mp != nil {
		merr = mp.ForceFlush(ctx)
	}
	return errors.Join(p.tp.ForceFlush(ctx), p.lp.ForceFlush(ctx), merr)
}
