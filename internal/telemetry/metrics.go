package telemetry

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/config"
	promclient "github.com/prometheus/client_golang/prometheus"
	prombridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// StartMetrics begins the periodic OTLP export of every family g gathers
// (the server's Prometheus registry, so OpenTelemetry sees exactly what
// /metrics serves) when telemetry.metrics.endpoint is set; otherwise, or
// on a nil Provider, it does nothing. It may be called once; Shutdown
// stops the export after a last collection.
func (p *Provider) StartMetrics(ctx context.Context, g promclient.Gatherer) error {
	if p == nil || p.cfg.Metrics.Endpoint == "" {
		return nil
	}
	p.metricsMu.Lock()
	defer p.metricsMu.Unlock()
	if p.mp != nil {
		return errors.New("telemetry: StartMetrics called twice")
	}
	sig := p.cfg.Metrics.Signal()
	exp, err := newMetricExporter(ctx, sig, p.opts)
	if err != nil {
		return fmt.Errorf("telemetry.metrics (%s %s): %w", sig.Transport, sig.Endpoint, err)
	}
	reader := sdkmetric.NewPeriodicReader(exp,
		sdkmetric.WithInterval(p.cfg.Metrics.Interval.Std()),
		sdkmetric.WithTimeout(p.opts.ExportTimeout),
		sdkmetric.WithProducer(prombridge.NewMetricProducer(prombridge.WithGatherer(g))),
	)
	p.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(p.res), sdkmetric.WithReader(reader))
	return nil
}

// newMetricExporter builds the OTLP metric exporter of sig, wrapped so its
// errors are rate-limited log lines.
func newMetricExporter(ctx context.Context, sig config.TelemetrySignal, opts Options) (sdkmetric.Exporter, error) {
	var exp sdkmetric.Exporter
	var err error
	switch sig.Transport {
	case config.TelemetryHTTP:
		exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(sig.Endpoint), otlpmetrichttp.WithTimeout(opts.ExportTimeout))
	default:
		exp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(sig.Endpoint), otlpmetricgrpc.WithTimeout(opts.ExportTimeout))
	}
	if err != nil {
		return nil, err
	}
	return &limitedMetrics{Exporter: exp, errs: newErrorLog("metrics", sig, opts)}, nil
}

// limitedMetrics is limitedSpans for metric exports.
type limitedMetrics struct {
	sdkmetric.Exporter
	errs *errorLog
}

// Export implements sdkmetric.Exporter.
func (e *limitedMetrics) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if err := e.Exporter.Export(ctx, rm); err != nil {
		n := 0
		for _, sm := range rm.ScopeMetrics {
			n += len(sm.Metrics)
		}
		e.errs.report(err, n)
	}
	return nil
}
