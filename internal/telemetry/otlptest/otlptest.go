// Package otlptest is an in-process OTLP receiver for tests: one listener
// for OTLP/HTTP protobuf (POST /v1/traces, /v1/logs, /v1/metrics) and one
// for OTLP gRPC, both on 127.0.0.1, keeping every span, log record and
// metric received.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one received span with its resource's attributes.
type Span struct {
	*tracepb.Span
	// Resource holds the resource attributes rendered as text.
	Resource map[string]string
}

// Attr returns the span attribute key rendered as text ("" when absent).
func (s Span) Attr(key string) string { return attrText(s.Attributes, key) }

// Log is one received log record with its resource's attributes.
type Log struct {
	*logspb.LogRecord
	// Resource holds the resource attributes rendered as text.
	Resource map[string]string
}

// Collector receives OTLP exports. Its methods are safe for concurrent use.
type Collector struct {
	// HTTPURL is the base URL of the HTTP receiver ("http://127.0.0.1:port").
	HTTPURL string
	// GRPCURL is the gRPC receiver as an endpoint URL
	// ("http://127.0.0.1:port": plaintext).
	GRPCURL string

	mu      sync.Mutex
	spans   []Span
	logs    []Log
	metrics []*metricspb.Metric
	wake    chan struct{}

	http *httptest.Server
	grpc *grpc.Server
}

// Start runs a Collector until the test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	c := &Collector{wake: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", c.serveTraces)
	mux.HandleFunc("POST /v1/logs", c.serveLogs)
	mux.HandleFunc("POST /v1/metrics", c.serveMetrics)
	c.http = httptest.NewServer(mux)
	c.HTTPURL = c.http.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.grpc = grpc.NewServer()
	coltrace.RegisterTraceServiceServer(c.grpc, traceService{c: c})
	collogs.RegisterLogsServiceServer(c.grpc, logsService{c: c})
	colmetrics.RegisterMetricsServiceServer(c.grpc, metricsService{c: c})
	go func() { _ = c.grpc.Serve(ln) }()
	c.GRPCURL = "http://" + ln.Addr().String()
	t.Cleanup(func() {
		c.grpc.Stop()
		c.http.Close()
	})
	return c
}

func readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = http.MaxBytesReader(nil, r.Body, 64<<20)
	if r.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(rd)
		if err != nil {
			return nil, err
		}
		rd = z
	}
	return io.ReadAll(rd)
}

func (c *Collector) serveTraces(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	var req coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.addSpans(req.GetResourceSpans())
	writeProto(w, &coltrace.ExportTraceServiceResponse{})
}

func (c *Collector) serveLogs(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	var req collogs.ExportLogsServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.addLogs(req.GetResourceLogs())
	writeProto(w, &collogs.ExportLogsServiceResponse{})
}

func (c *Collector) serveMetrics(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	var req colmetrics.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.addMetrics(req.GetResourceMetrics())
	writeProto(w, &colmetrics.ExportMetricsServiceResponse{})
}

type metricsService struct {
	colmetrics.UnimplementedMetricsServiceServer
	c *Collector
}

// Export implements the OTLP metrics service.
func (s metricsService) Export(_ context.Context, req *colmetrics.ExportMetricsServiceRequest) (*colmetrics.ExportMetricsServiceResponse, error) {
	s.c.addMetrics(req.GetResourceMetrics())
	return &colmetrics.ExportMetricsServiceResponse{}, nil
}

func (c *Collector) addMetrics(rm []*metricspb.ResourceMetrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rm {
		for _, sm := range r.GetScopeMetrics() {
			c.metrics = append(c.metrics, sm.GetMetrics()...)
		}
	}
	c.notifyLocked()
}

// WaitMetric waits up to timeout for a metric named name and returns the
// latest one received.
func (c *Collector) WaitMetric(timeout time.Duration, name string) (*metricspb.Metric, error) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for i := len(c.metrics) - 1; i >= 0; i-- {
			if c.metrics[i].GetName() == name {
				m := c.metrics[i]
				c.mu.Unlock()
				return m, nil
			}
		}
		wake := c.wake
		n := len(c.metrics)
		c.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			return nil, fmt.Errorf("no metric %s within %v (%d received)", name, timeout, n)
		}
	}
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = io.Copy(w, bytes.NewReader(b))
}

type traceService struct {
	coltrace.UnimplementedTraceServiceServer
	c *Collector
}

// Export implements the OTLP trace service.
func (s traceService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	s.c.addSpans(req.GetResourceSpans())
	return &coltrace.ExportTraceServiceResponse{}, nil
}

type logsService struct {
	collogs.UnimplementedLogsServiceServer
	c *Collector
}

// Export implements the OTLP logs service.
func (s logsService) Export(_ context.Context, req *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	s.c.addLogs(req.GetResourceLogs())
	return &collogs.ExportLogsServiceResponse{}, nil
}

func (c *Collector) addSpans(rs []*tracepb.ResourceSpans) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rs {
		res := attrMap(r.GetResource().GetAttributes())
		for _, ss := range r.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				c.spans = append(c.spans, Span{Span: sp, Resource: res})
			}
		}
	}
	c.notifyLocked()
}

func (c *Collector) addLogs(rl []*logspb.ResourceLogs) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rl {
		res := attrMap(r.GetResource().GetAttributes())
		for _, sl := range r.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				c.logs = append(c.logs, Log{LogRecord: lr, Resource: res})
			}
		}
	}
	c.notifyLocked()
}

func (c *Collector) notifyLocked() {
	close(c.wake)
	c.wake = make(chan struct{})
}

// Spans returns every span received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Logs returns every log record received so far.
func (c *Collector) Logs() []Log {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Log(nil), c.logs...)
}

// WaitSpan waits up to timeout for a span match accepts.
func (c *Collector) WaitSpan(timeout time.Duration, match func(Span) bool) (Span, error) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for _, s := range c.spans {
			if match(s) {
				c.mu.Unlock()
				return s, nil
			}
		}
		wake := c.wake
		n := len(c.spans)
		c.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			return Span{}, fmt.Errorf("no matching span within %v (%d received)", timeout, n)
		}
	}
}

// WaitLog waits up to timeout for a log record match accepts.
func (c *Collector) WaitLog(timeout time.Duration, match func(Log) bool) (Log, error) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for _, l := range c.logs {
			if match(l) {
				c.mu.Unlock()
				return l, nil
			}
		}
		wake := c.wake
		n := len(c.logs)
		c.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			return Log{}, fmt.Errorf("no matching log record within %v (%d received)", timeout, n)
		}
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.GetKey()] = valueText(kv.GetValue())
	}
	return out
}

func attrText(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return valueText(kv.GetValue())
		}
	}
	return ""
}

func valueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return fmt.Sprint(v)
}
