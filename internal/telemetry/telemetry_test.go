package telemetry

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/telemetry/otlptest"
	"github.com/iggo-dev/iggo/wire"
	"go.opentelemetry.io/otel/trace"
)

func enabledConfig(transport, base string) config.TelemetryConfig {
	c := config.Default().Telemetry
	c.Enabled = true
	c.ServiceName = "iggo-test"
	c.Logs.Transport, c.Traces.Transport = transport, transport
	if transport == config.TelemetryHTTP {
		c.Logs.Endpoint, c.Traces.Endpoint = base+"/v1/logs", base+"/v1/traces"
	} else {
		c.Logs.Endpoint, c.Traces.Endpoint = base, base
	}
	return c
}

func newProvider(t *testing.T, cfg config.TelemetryConfig, opts Options) *Provider {
	t.Helper()
	if opts.Version == "" {
		opts.Version = "9.8.7"
	}
	if opts.BatchInterval == 0 {
		opts.BatchInterval = 50 * time.Millisecond
	}
	if opts.ExportTimeout == 0 {
		opts.ExportTimeout = 2 * time.Second
	}
	p, err := New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	})
	return p
}

// producerContext is a sampled remote span context a producer would send.
func producerContext(t *testing.T, seed byte) trace.SpanContext {
	t.Helper()
	var tid trace.TraceID
	var sid trace.SpanID
	for i := range tid {
		tid[i] = seed + byte(i)
	}
	for i := range sid {
		sid[i] = seed ^ byte(i+1)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

// sendBody encodes SEND_MESSAGES to stream 3 / topic "orders", partition
// 2, with one message per header block.
func sendBody(t *testing.T, headers ...wire.UserHeaders) []byte {
	t.Helper()
	msgs := make([]wire.Message, len(headers))
	for i, h := range headers {
		msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(i + 1)}, Payload: []byte("payload"), UserHeaders: h.AppendTo(nil)}
	}
	batch, err := wire.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	req := wire.SendMessages{StreamID: wire.NumericID(3), TopicID: wire.NamedID("orders"), Partitioning: wire.Partitioning{Kind: wire.PartitionByID, PartitionID: 2}}
	req.SetBatch(batch)
	return req.AppendTo(nil)
}

func sendReply(partition uint32, offset uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, partition)
	return binary.LittleEndian.AppendUint64(b, offset)
}

func TestDisabledProviderIsNil(t *testing.T) {
	p, err := New(context.Background(), config.Default().Telemetry, Options{})
	if err != nil || p != nil {
		t.Fatalf("disabled: %v %v", p, err)
	}
	if p.LogHandler() != nil || p.Observer() != nil || p.Tracer() != nil || p.Shutdown(context.Background()) != nil || p.ForceFlush(context.Background()) != nil {
		t.Fatal("nil Provider methods must return nil")
	}
}

func TestSpansAndLogsOverHTTP(t *testing.T) { testExport(t, config.TelemetryHTTP) }

func TestSpansAndLogsOverGRPC(t *testing.T) { testExport(t, config.TelemetryGRPC) }

func testExport(t *testing.T, transport string) {
	col := otlptest.Start(t)
	base := col.HTTPURL
	if transport == config.TelemetryGRPC {
		base = col.GRPCURL
	}
	p := newProvider(t, enabledConfig(transport, base), Options{})
	prod := producerContext(t, 0x10)
	other := producerContext(t, 0x40)
	body := sendBody(t, TraceParentHeaders(prod), nil, TraceParentHeaders(other), TraceParentHeaders(prod))
	start := time.Now().Add(-3 * time.Millisecond)
	p.Observer().Observe(dispatch.Observation{
		Code: wire.CmdSendMessages, Transport: session.TransportTCP, Start: start, Duration: 2 * time.Millisecond,
		RequestBytes: wire.HeaderSize + len(body), ReplyBytes: wire.HeaderSize + 24, Body: body, Reply: sendReply(2, 41),
	})
	// A denied poll: error status, attributes from the request.
	poll := wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(7)), StreamID: wire.NumericID(3), TopicID: wire.NamedID("orders"),
		Partition: wire.OptPartition{Present: true, ID: 2}, Strategy: wire.FirstStrategy(), Count: 10}
	pb := poll.AppendTo(nil)
	p.Observer().Observe(dispatch.Observation{Code: wire.CmdPollMessages, Transport: session.TransportQUIC, Start: start, Duration: time.Millisecond, Status: wire.ErrUnauthorized.Code, Body: pb})
	slog.New(p.LogHandler()).Warn("disk almost full", "path", "/data")

	send, err := col.WaitSpan(10*time.Second, func(s otlptest.Span) bool { return s.Name == "send_messages" })
	if err != nil {
		t.Fatal(err)
	}
	wantTrace := prod.TraceID()
	if !bytes.Equal(send.TraceId, wantTrace[:]) {
		t.Errorf("send span trace %s, want the producer's %s", hex.EncodeToString(send.TraceId), wantTrace)
	}
	wantParent := prod.SpanID()
	if !bytes.Equal(send.ParentSpanId, wantParent[:]) {
		t.Errorf("send span parent %x, want %s", send.ParentSpanId, wantParent)
	}
	if len(send.Links) != 1 || !bytes.Equal(send.Links[0].TraceId, func() []byte { id := other.TraceID(); return id[:] }()) {
		t.Errorf("links %v, want one to the second producer trace", send.Links)
	}
	for k, v := range map[string]string{
		AttrCommand: "send_messages", AttrStream: "3", AttrTopic: "orders", AttrPartition: "2", AttrOffset: "41",
		AttrMessages: "4", AttrStatus: "0", AttrTransport: "tcp", AttrSystem: "iggy", AttrOperation: "send",
		AttrRequestBytes: strconv.Itoa(wire.HeaderSize + len(body)), AttrReplyBytes: strconv.Itoa(wire.HeaderSize + 24),
	} {
		if got := send.Attr(k); got != v {
			t.Errorf("send %s = %q, want %q", k, got, v)
		}
	}
	if send.Resource["service.name"] != "iggo-test" || send.Resource["service.version"] != "9.8.7" {
		t.Errorf("resource %v", send.Resource)
	}
	if got := time.Duration(send.EndTimeUnixNano - send.StartTimeUnixNano); got != 2*time.Millisecond {
		t.Errorf("span duration %v, want 2ms", got)
	}
	pollSpan, err := col.WaitSpan(10*time.Second, func(s otlptest.Span) bool { return s.Name == "poll_messages" })
	if err != nil {
		t.Fatal(err)
	}
	if pollSpan.Attr(AttrPartition) != "2" || pollSpan.Attr(AttrStatus) != "41" || pollSpan.Attr(AttrConsumer) != "7" || pollSpan.Status.GetMessage() != "Unauthorized" {
		t.Errorf("poll span attrs %v status %v", pollSpan.Attributes, pollSpan.Status)
	}
	if len(pollSpan.ParentSpanId) != 0 {
		t.Errorf("poll span has a parent")
	}
	lg, err := col.WaitLog(10*time.Second, func(l otlptest.Log) bool { return l.Body.GetStringValue() == "disk almost full" })
	if err != nil {
		t.Fatal(err)
	}
	if lg.Resource["service.name"] != "iggo-test" || lg.SeverityText != "WARN" {
		t.Errorf("log record %v resource %v", lg.LogRecord, lg.Resource)
	}
}

func TestSampleRatioZeroHonoursSampledParent(t *testing.T) {
	col := otlptest.Start(t)
	cfg := enabledConfig(config.TelemetryHTTP, col.HTTPURL)
	cfg.Traces.SampleRatio = 0
	p := newProvider(t, cfg, Options{})
	prod := producerContext(t, 0x22)
	body := sendBody(t, TraceParentHeaders(prod))
	p.Observer().Observe(dispatch.Observation{Code: wire.CmdPing, Start: time.Now()})
	p.Observer().Observe(dispatch.Observation{Code: wire.CmdSendMessages, Start: time.Now(), Body: body})
	if _, err := col.WaitSpan(10*time.Second, func(s otlptest.Span) bool { return s.Name == "send_messages" }); err != nil {
		t.Fatal(err)
	}
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range col.Spans() {
		if s.Name == "ping" {
			t.Fatal("a root request was sampled at ratio 0")
		}
	}
}

func TestTraceContexts(t *testing.T) {
	a, b := producerContext(t, 1), producerContext(t, 2)
	bad := wire.UserHeaders{{Key: wire.StringHeader("traceparent"), Value: wire.StringHeader("00-zz-yy-01")}}
	upper := wire.UserHeaders{{Key: wire.StringHeader("TraceParent"), Value: wire.RawHeader([]byte(TraceParentHeaders(a)[0].Value.Data))}}
	var req wire.SendMessages
	if err := req.DecodeMetadata(sendBody(t, bad, nil, upper, TraceParentHeaders(b), TraceParentHeaders(b))); err != nil {
		t.Fatal(err)
	}
	parent, links := traceContexts(req.Batch)
	if parent.TraceID() != a.TraceID() || parent.SpanID() != a.SpanID() || !parent.IsRemote() || !parent.IsSampled() {
		t.Fatalf("parent %v, want %v", parent, a)
	}
	if len(links) != 1 || links[0].SpanContext.TraceID() != b.TraceID() {
		t.Fatalf("links %v", links)
	}
	if p, l := traceContexts([]byte("short")); p.IsValid() || l != nil {
		t.Fatal("garbage batch yielded a context")
	}
}

// logBuffer is a concurrency-safe log sink for the rate-limit test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestUnreachableEndpointIsRateLimited: exports to a port nobody listens
// on fail, the caller never blocks, and the failures produce one log line
// per interval naming the endpoint and the key to fix.
func TestUnreachableEndpointIsRateLimited(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	for _, transport := range []string{config.TelemetryHTTP, config.TelemetryGRPC} {
		t.Run(transport, func(t *testing.T) {
			var out logBuffer
			clock := &fakeClock{t: time.Unix(1000, 0)}
			p := newProvider(t, enabledConfig(transport, dead), Options{
				Logger: slog.New(slog.NewTextHandler(&out, nil)), ErrorInterval: time.Minute, Now: clock.now,
				ExportTimeout: 500 * time.Millisecond,
			})
			begin := time.Now()
			for i := 0; i < 200; i++ {
				p.Observer().Observe(dispatch.Observation{Code: wire.CmdPing, Start: time.Now()})
			}
			if d := time.Since(begin); d > time.Second {
				t.Fatalf("recording spans blocked for %v", d)
			}
			for i := 0; i < 3; i++ {
				p.Observer().Observe(dispatch.Observation{Code: wire.CmdPing, Start: time.Now()})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = p.tp.ForceFlush(ctx)
				cancel()
			}
			lines := out.lines()
			if len(lines) != 1 {
				t.Fatalf("%d log lines within one interval, want 1:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			for _, want := range []string{dead, "telemetry.traces.transport", "telemetry.enabled = false", "level=WARN"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("log line lacks %q: %s", want, lines[0])
				}
			}
			clock.add(2 * time.Minute)
			p.Observer().Observe(dispatch.Observation{Code: wire.CmdPing, Start: time.Now()})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = p.tp.ForceFlush(ctx)
			cancel()
			lines = out.lines()
			if len(lines) != 2 || !strings.Contains(lines[1], "failed_exports_since_last_report=") {
				t.Fatalf("after the interval: %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			if strings.Contains(lines[1], "failed_exports_since_last_report=0 ") {
				t.Errorf("suppressed failures were not counted: %s", lines[1])
			}
		})
	}
}
