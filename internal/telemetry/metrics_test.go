package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/telemetry/otlptest"
	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsMirror: the families of a Prometheus registry are exported
// over OTLP with their values, over HTTP and gRPC.
func TestMetricsMirror(t *testing.T) {
	for _, transport := range []string{config.TelemetryHTTP, config.TelemetryGRPC} {
		t.Run(transport, func(t *testing.T) {
			col := otlptest.Start(t)
			cfg := enabledConfig(transport, col.HTTPURL)
			cfg.Metrics.Transport, cfg.Metrics.Endpoint = transport, col.HTTPURL+"/v1/metrics"
			if transport == config.TelemetryGRPC {
				cfg = enabledConfig(transport, col.GRPCURL)
				cfg.Metrics.Transport, cfg.Metrics.Endpoint = transport, col.GRPCURL
			}
			cfg.Metrics.Interval = config.Duration(time.Hour) // only the explicit flush exports
			p := newProvider(t, cfg, Options{})
			reg := prometheus.NewRegistry()
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: "iggo_test_things_total", Help: "things"})
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "streams", Help: "total count of streams."})
			reg.MustRegister(c, g)
			c.Add(7)
			g.Set(3)
			if err := p.StartMetrics(context.Background(), reg); err != nil {
				t.Fatal(err)
			}
			if err := p.StartMetrics(context.Background(), reg); err == nil {
				t.Fatal("second StartMetrics accepted")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := p.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			m, err := col.WaitMetric(10*time.Second, "iggo_test_things_total")
			if err != nil {
				t.Fatal(err)
			}
			if pts := m.GetSum().GetDataPoints(); len(pts) != 1 || pts[0].GetAsDouble() != 7 || !m.GetSum().GetIsMonotonic() {
				t.Fatalf("counter exported as %v", m)
			}
			s, err := col.WaitMetric(10*time.Second, "streams")
			if err != nil {
				t.Fatal(err)
			}
			if pts := s.GetGauge().GetDataPoints(); len(pts) != 1 || pts[0].GetAsDouble() != 3 {
				t.Fatalf("gauge exported as %v", s)
			}
		})
	}
}

func TestMetricsMirrorOffWithoutEndpoint(t *testing.T) {
	col := otlptest.Start(t)
	p := newProvider(t, enabledConfig(config.TelemetryHTTP, col.HTTPURL), Options{})
	if err := p.StartMetrics(context.Background(), prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	if p.mp != nil {
		t.Fatal("metrics pipeline started without telemetry.metrics.endpoint")
	}
	var nilP *Provider
	if err := nilP.StartMetrics(context.Background(), prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
}
