package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newSpanExporter builds the OTLP span exporter of sig, wrapped so its
// errors are rate-limited log lines.
func newSpanExporter(ctx context.Context, sig config.TelemetrySignal, opts Options) (sdktrace.SpanExporter, error) {
	var exp sdktrace.SpanExporter
	var err error
	switch sig.Transport {
	case config.TelemetryHTTP:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(sig.Endpoint), otlptracehttp.WithTimeout(opts.ExportTimeout))
	default:
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(sig.Endpoint), otlptracegrpc.WithTimeout(opts.ExportTimeout))
	}
	if err != nil {
		return nil, err
	}
	return &limitedSpans{SpanExporter: exp, errs: newErrorLog("traces", sig, opts)}, nil
}

// newLogExporter builds the OTLP log exporter of sig, wrapped likewise.
func newLogExporter(ctx context.Context, sig config.TelemetrySignal, opts Options) (sdklog.Exporter, error) {
	var exp sdklog.Exporter
	var err error
	switch sig.Transport {
	case config.TelemetryHTTP:
		exp, err = otlploghttp.New(ctx, otlploghttp.WithEndpointURL(sig.Endpoint), otlploghttp.WithTimeout(opts.ExportTimeout))
	default:
		exp, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpointURL(sig.Endpoint), otlploggrpc.WithTimeout(opts.ExportTimeout))
	}
	if err != nil {
		return nil, err
	}
	return &limitedLogs{Exporter: exp, errs: newErrorLog("logs", sig, opts)}, nil
}

// limitedSpans reports export errors to its errorLog and tells the batch
// processor the export succeeded, so the SDK's global error handler is
// never involved; the batch is dropped either way.
type limitedSpans struct {
	sdktrace.SpanExporter
	errs *errorLog
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *limitedSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.errs.report(err, len(spans))
	}
	return nil
}

// limitedLogs is limitedSpans for log records.
type limitedLogs struct {
	sdklog.Exporter
	errs *errorLog
}

// Export implements sdklog.Exporter.
func (e *limitedLogs) Export(ctx context.Context, records []sdklog.Record) error {
	if err := e.Exporter.Export(ctx, records); err != nil {
		e.errs.report(err, len(records))
	}
	return nil
}

// errorLog writes at most one line per interval for a signal's export
// errors, counting what it suppressed in between.
type errorLog struct {
	signal   string
	sig      config.TelemetrySignal
	log      *slog.Logger
	interval time.Duration
	now      func() time.Time

	mu         sync.Mutex
	last       time.Time // guarded by mu
	suppressed int       // failed exports not logged since last; guarded by mu
	dropped    int       // items in those exports; guarded by mu
}

func newErrorLog(signal string, sig config.TelemetrySignal, opts Options) *errorLog {
	return &errorLog{signal: signal, sig: sig, log: opts.Logger, interval: opts.ErrorInterval, now: opts.Now}
}

// report records one failed export of n items.
func (l *errorLog) report(err error, n int) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		l.suppressed++
		l.dropped += n
		l.mu.Unlock()
		return
	}
	suppressed, dropped := l.suppressed, l.dropped
	l.last, l.suppressed, l.dropped = now, 0, 0
	l.mu.Unlock()
	l.log.Warn(fmt.Sprintf("telemetry: exporting %s to %s failed; the server keeps serving and drops them. Check that an OTLP collector listens there and that telemetry.%s.transport (%s) matches it, or set telemetry.enabled = false",
		l.signal, l.sig.Endpoint, l.signal, l.sig.Transport),
		"err", err, "dropped", n, "failed_exports_since_last_report", suppressed, "dropped_since_last_report", dropped,
		"next_report_after", l.interval.String())
}
