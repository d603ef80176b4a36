package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// TelemetryConfig is [telemetry]: OpenTelemetry export of logs and traces
// over OTLP (../shared/design/ops.md §3). Keys and defaults are the
// reference's; Traces.SampleRatio is an Iggo addition.
type TelemetryConfig struct {
	// Enabled turns the export on (default false).
	Enabled bool `toml:"enabled"`
	// ServiceName is the service.name resource attribute (default "iggy",
	// the reference's, so existing dashboards keep matching).
	ServiceName string           `toml:"service_name"`
	Logs        TelemetrySignal  `toml:"logs"`
	Traces      TelemetryTraces  `toml:"traces"`
	Metrics     TelemetryMetrics `toml:"metrics"`
}

// TelemetrySignal is the OTLP exporter of one signal.
type TelemetrySignal struct {
	// Transport is "grpc" or "http" (HTTP/protobuf).
	Transport string `toml:"transport"`
	// Endpoint is the collector URL. For http it is the full signal URL
	// (e.g. http://localhost:4318/v1/traces); for grpc only scheme, host
	// and port are used and an http scheme means no TLS.
	Endpoint string `toml:"endpoint"`
}

// TelemetryTraces is [telemetry.traces]: the exporter (as
// TelemetrySignal) and the sampler.
type TelemetryTraces struct {
	// Transport is "grpc" or "http" (HTTP/protobuf).
	Transport string `toml:"transport"`
	// Endpoint is the collector URL. For http it is the full signal URL
	// (e.g. http://localhost:4318/v1/traces); for grpc only scheme, host
	// and port are used and an http scheme means no TLS.
	Endpoint string `toml:"endpoint"`
	// SampleRatio is the share of requests without a sampled parent that
	// get a span, 0..=1 (default 1: every request). A request whose
	// traceparent user header carries a sampled parent is always traced
	// (parent-based sampling). Not a reference key.
	SampleRatio Ratio `toml:"sample_ratio"`
}

// TelemetryMetrics is [telemetry.metrics], an Iggo addition: a periodic
// OTLP export of the same families /metrics serves. The reference exports
// no OpenTelemetry metrics, so the default endpoint is empty (off).
type TelemetryMetrics struct {
	// Transport is "grpc" or "http" (HTTP/protobuf).
	Transport string `toml:"transport"`
	// Endpoint is the collector URL (for http the full URL, e.g.
	// http://localhost:4318/v1/metrics); empty disables the export.
	Endpoint string `toml:"endpoint"`
	// Interval is the export period (default 60s).
	Interval Duration `toml:"interval"`
}

// Telemetry transports.
const (
	TelemetryGRPC = "grpc"
	TelemetryHTTP = "http"
)

func defaultTelemetry() TelemetryConfig {
	return TelemetryConfig{
		ServiceName: "iggy",
		Logs:        TelemetrySignal{Transport: TelemetryGRPC, Endpoint: "http://localhost:7281/v1/logs"},
		Traces: TelemetryTraces{
			Transport:   TelemetryGRPC,
			Endpoint:    "http://localhost:7281/v1/traces",
			SampleRatio: 1,
		},
		Metrics: TelemetryMetrics{Transport: TelemetryGRPC, Interval: Duration(60 * time.Second)},
	}
}

// validateTelemetry checks [telemetry]: always the ratio; when enabled a
// non-empty service name, known transports and http(s) endpoint URLs (the
// reference checks the names and endpoints are non-empty).
func (c *Config) validateTelemetry() []error {
	t := c.Telemetry
	var errs []error
	if r := float64(t.Traces.SampleRatio); r < 0 || r > 1 || r != r {
		errs = append(errs, fmt.Errorf("telemetry.traces.sample_ratio: %v is outside 0..=1", r))
	}
	if t.Metrics.Interval <= 0 {
		errs = append(errs, fmt.Errorf("telemetry.metrics.interval: must be positive"))
	}
	if !t.Enabled {
		return errs
	}
	if strings.TrimSpace(t.ServiceName) == "" {
		errs = append(errs, fmt.Errorf("telemetry.service_name: must not be empty when telemetry is enabled"))
	}
	for _, s := range []struct {
		key string
		sig TelemetrySignal
	}{{"telemetry.logs", t.Logs}, {"telemetry.traces", t.Traces.Signal()}} {
		errs = append(errs, checkSignal(s.key, s.sig)...)
	}
	if m := t.Metrics; m.Endpoint != "" {
		errs = append(errs, checkSignal("telemetry.metrics", TelemetrySignal{Transport: m.Transport, Endpoint: m.Endpoint})...)
	}
	return errs
}

// Ratio is a number in 0..=1 written as a TOML float (or integer or
// string); it parses text because an IGGY_* variable is text, and is
// encoded as a TOML float.
type Ratio float64

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Ratio) UnmarshalText(b []byte) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", b)
	}
	*r = Ratio(v)
	return nil
}

// Signal returns the traces exporter settings.
func (t TelemetryTraces) Signal() TelemetrySignal {
	return TelemetrySignal{Transport: t.Transport, Endpoint: t.Endpoint}
}

// checkSignal validates one exporter's transport and endpoint.
func checkSignal(key string, sig TelemetrySignal) []error {
	var errs []error
	if sig.Transport != TelemetryGRPC && sig.Transport != TelemetryHTTP {
		errs = append(errs, fmt.Errorf("%s.transport: %q is not grpc or http", key, sig.Transport))
	}
	u, err := url.Parse(sig.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("%s.endpoint: %q is not an http:// or https:// URL with a host", key, sig.Endpoint))
	}
	return errs
}

// Signal returns the metrics exporter settings.
func (m TelemetryMetrics) Signal() TelemetrySignal {
	return TelemetrySignal{Transport: m.Transport, Endpoint: m.Endpoint}
}
