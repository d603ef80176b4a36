package itest

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/telemetry"
	"github.com/iggo-dev/iggo/internal/telemetry/otlptest"
	"github.com/iggo-dev/iggo/wire"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// OpenTelemetry export from a real broker (docs/OBSERVABILITY.md): a
// producer's traceparent user header becomes the parent of the server's
// send span, the consumer receives the header unchanged, every request
// span carries its attributes, log records are exported too, and an
// unreachable collector does not stop the server from serving.

func withTelemetry(transport, traces, logs, metrics string) Option {
	return WithConfig(func(c *config.Config) {
		c.Telemetry.Enabled = true
		c.Telemetry.ServiceName = "iggo-itest"
		c.Telemetry.Traces.Transport, c.Telemetry.Traces.Endpoint = transport, traces
		c.Telemetry.Logs.Transport, c.Telemetry.Logs.Endpoint = transport, logs
		c.Telemetry.Metrics.Transport, c.Telemetry.Metrics.Endpoint = transport, metrics
	})
}

func producerSpan(seed byte) trace.SpanContext {
	var tid trace.TraceID
	var sid trace.SpanID
	for i := range tid {
		tid[i] = seed + byte(3*i)
	}
	for i := range sid {
		sid[i] = seed ^ byte(i+9)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

func TestTelemetryTracesProducerToConsumer(t *testing.T) {
	for _, transport := range []string{config.TelemetryHTTP, config.TelemetryGRPC} {
		t.Run(transport, func(t *testing.T) {
			col := otlptest.Start(t)
			traces, logs, mets := col.HTTPURL+"/v1/traces", col.HTTPURL+"/v1/logs", col.HTTPURL+"/v1/metrics"
			if transport == config.TelemetryGRPC {
				traces, logs, mets = col.GRPCURL, col.GRPCURL, col.GRPCURL
			}
			s := Start(t, withTelemetry(transport, traces, logs, mets))
			ctx := obsCtx(t)
			c := obsClient(t, s)
			stream, topic := wire.NamedID("traced"), wire.NamedID("orders")
			if _, err := c.CreateStream(ctx, "traced"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateTopic(ctx, stream, "orders", 1); err != nil {
				t.Fatal(err)
			}
			prod := producerSpan(0x31)
			headers := telemetry.TraceParentHeaders(prod).AppendTo(nil)
			if _, err := c.SendMessages(ctx, stream, topic, wire.PartitioningByID(0), []wire.Message{
				{ID: wire.Uint128{Lo: 1}, Payload: []byte("first"), UserHeaders: headers},
				{ID: wire.Uint128{Lo: 2}, Payload: []byte("second")},
			}); err != nil {
				t.Fatal(err)
			}
			polled, err := c.PollMessages(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(5)), StreamID: stream, TopicID: topic,
				Partition: wire.OptPartition{Present: true, ID: 0}, Strategy: wire.FirstStrategy(), Count: 10})
			if err != nil || polled.Count != 2 {
				t.Fatalf("poll: %v %+v", err, polled)
			}
			// The consumer continues the producer's trace from the header.
			it := polled.Messages()
			m, ok := it.Next()
			if !ok {
				t.Fatal("no polled message")
			}
			var uh wire.UserHeaders
			if err := uh.Decode(m.UserHeaders); err != nil || len(uh) != 1 {
				t.Fatalf("polled headers %v %v", uh, err)
			}
			carrier := propagation.MapCarrier{string(uh[0].Key.Data): string(uh[0].Value.Data)}
			got := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
			if got.TraceID() != prod.TraceID() {
				t.Fatalf("consumer sees trace %s, want %s", got.TraceID(), prod.TraceID())
			}
			// Shutdown flushes the broker's own Provider.
			s.Stop()

			send, err := col.WaitSpan(10*time.Second, func(sp otlptest.Span) bool { return sp.Name == "send_messages" })
			if err != nil {
				t.Fatal(err)
			}
			tid, sid := prod.TraceID(), prod.SpanID()
			if !bytes.Equal(send.TraceId, tid[:]) || !bytes.Equal(send.ParentSpanId, sid[:]) {
				t.Errorf("send span trace %x parent %x, want %s / %s", send.TraceId, send.ParentSpanId, tid, sid)
			}
			for k, v := range map[string]string{
				telemetry.AttrStream: "traced", telemetry.AttrTopic: "orders", telemetry.AttrPartition: "0",
				telemetry.AttrMessages: "2", telemetry.AttrStatus: "0", telemetry.AttrTransport: "tcp", telemetry.AttrOffset: "0",
			} {
				if got := send.Attr(k); got != v {
					t.Errorf("send span %s = %q, want %q", k, got, v)
				}
			}
			if send.Attr(telemetry.AttrRequestBytes) == "" || send.Attr(telemetry.AttrRequestBytes) == "0" {
				t.Errorf("send span has no request size")
			}
			if send.Resource["service.name"] != "iggo-itest" || send.Resource["service.version"] != broker.Version {
				t.Errorf("resource %v", send.Resource)
			}
			poll, err := col.WaitSpan(10*time.Second, func(sp otlptest.Span) bool { return sp.Name == "poll_messages" })
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]string{telemetry.AttrStream: "traced", telemetry.AttrPartition: "0", telemetry.AttrMessages: "2", telemetry.AttrConsumer: "5"} {
				if got := poll.Attr(k); got != v {
					t.Errorf("poll span %s = %q, want %q", k, got, v)
				}
			}
			if _, err := col.WaitSpan(10*time.Second, func(sp otlptest.Span) bool {
				return sp.Name == "login_register" || sp.Name == "create_stream"
			}); err != nil {
				t.Errorf("metadata requests have no spans: %v", err)
			}
			if _, err := col.WaitLog(10*time.Second, func(l otlptest.Log) bool {
				return strings.Contains(l.Body.GetStringValue(), "telemetry export on") && l.Resource["service.name"] == "iggo-itest"
			}); err != nil {
				t.Errorf("broker log records not exported: %v", err)
			}
			// The metrics mirror: the last collection at shutdown holds
			// the same families /metrics serves.
			streams, err := col.WaitMetric(10*time.Second, "streams")
			if err != nil {
				t.Fatal(err)
			}
			if pts := streams.GetGauge().GetDataPoints(); len(pts) != 1 || pts[0].GetAsDouble() != 1 {
				t.Errorf("streams gauge exported as %v", streams)
			}
			in, err := col.WaitMetric(10*time.Second, "iggo_topic_messages_in_total")
			if err != nil {
				t.Fatal(err)
			}
			if pts := in.GetSum().GetDataPoints(); len(pts) != 1 || pts[0].GetAsDouble() != 2 {
				t.Errorf("topic messages exported as %v", in)
			}
		})
	}
}

// syncBuf is a concurrency-safe log sink.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTelemetryUnreachableCollectorKeepsServing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	var out syncBuf
	s := Start(t, withTelemetry(config.TelemetryHTTP, dead+"/v1/traces", dead+"/v1/logs", dead+"/v1/metrics"),
		WithBrokerOptions(broker.WithLogger(slog.New(slog.NewTextHandler(&out, nil)))))
	ctx := obsCtx(t)
	c := obsClient(t, s)
	stream, topic := wire.NamedID("dark"), wire.NamedID("t")
	if _, err := c.CreateStream(ctx, "dark"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, stream, "t", 1); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	for i := 0; i < 50; i++ {
		if _, err := c.SendMessages(ctx, stream, topic, wire.PartitioningByID(0), []wire.Message{{ID: wire.Uint128{Lo: uint64(i + 1)}, Payload: []byte("p")}}); err != nil {
			t.Fatal(err)
		}
	}
	polled, err := c.PollMessages(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: stream, TopicID: topic,
		Partition: wire.OptPartition{Present: true, ID: 0}, Strategy: wire.FirstStrategy(), Count: 100})
	if err != nil || polled.Count != 50 {
		t.Fatalf("poll: %v %+v", err, polled)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("50 sends and a poll took %v with the collector down", d)
	}
	s.Stop()
	logged := out.String()
	if n := strings.Count(logged, "telemetry: exporting traces"); n != 1 {
		t.Errorf("%d trace export error lines, want exactly 1 (rate-limited):\n%s", n, logged)
	}
	if n := strings.Count(logged, "telemetry: exporting metrics"); n != 1 {
		t.Errorf("%d metric export error lines, want exactly 1:\n%s", n, logged)
	}
	if !strings.Contains(logged, dead) || !strings.Contains(logged, "telemetry.enabled = false") {
		t.Errorf("export error line does not name the endpoint and the fix:\n%s", logged)
	}
}
