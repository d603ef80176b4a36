package broker

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/metrics"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/telemetry"
	"github.com/iggo-dev/iggo/internal/telemetry/otlptest"
	"github.com/iggo-dev/iggo/wire"
)

func newObserved(t *testing.T, mutate func(*config.Config), opt ...Option) *Broker {
	t.Helper()
	c := testConfig(t)
	c.QUIC.Enabled, c.WebSocket.Enabled, c.HTTP.Enabled = false, false, false
	if mutate != nil {
		mutate(&c)
	}
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	b, err := New(c, append([]Option{cheap, quiet, WithRootCredentials("iggy", "iggy")}, opt...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return b
}

// TestRequestPathWithTelemetryOffAllocatesNothing: with telemetry
// disabled the dispatcher's Observer is the metrics registry alone, and a
// PING through the broker's own dispatcher allocates nothing.
func TestRequestPathWithTelemetryOffAllocatesNothing(t *testing.T) {
	b := newObserved(t, nil)
	if _, ok := b.requestObserver().(*metrics.Registry); !ok {
		t.Fatalf("observer with telemetry off is %T, want the bare registry", b.requestObserver())
	}
	if b.Telemetry() != nil {
		t.Fatal("a Provider exists with telemetry off")
	}
	conn := b.Sessions().Open(session.TransportTCP, "127.0.0.1:1", nil)
	defer b.Sessions().Close(conn, false)
	var x dispatch.Exchange
	ping := func() {
		x.Reset()
		x.Header = wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing}
		x.Conn = conn
		b.Dispatcher().Serve(&x)
	}
	ping()
	if n := testing.AllocsPerRun(1000, ping); n != 0 {
		t.Fatalf("PING allocates %.1f times with metrics on and telemetry off", n)
	}
	rec := httptest.NewRecorder()
	b.Metrics().Handler().ServeHTTP(rec, newScrape())
	if !strings.Contains(rec.Body.String(), `iggo_request_duration_seconds_count{command="ping",transport="tcp"} 1002`) {
		t.Fatalf("PINGs not counted:\n%s", grepLines(rec.Body.String(), "ping"))
	}
}

func TestTelemetryOwnershipAndLogTee(t *testing.T) {
	col := otlptest.Start(t)
	var out bytes.Buffer
	enable := func(c *config.Config) {
		c.Telemetry.Enabled = true
		c.Telemetry.Traces.Transport, c.Telemetry.Traces.Endpoint = config.TelemetryHTTP, col.HTTPURL+"/v1/traces"
		c.Telemetry.Logs.Transport, c.Telemetry.Logs.Endpoint = config.TelemetryHTTP, col.HTTPURL+"/v1/logs"
	}
	b := newObserved(t, enable, WithLogger(slog.New(slog.NewTextHandler(&out, nil))))
	if _, ok := b.requestObserver().(dispatch.Observers); !ok || !b.ownsTelemetry() {
		t.Fatalf("owned telemetry: observer %T", b.requestObserver())
	}
	// Records logged before Run (and through a derived logger) reach the
	// console; after Run built the Provider they are exported as well.
	derived := b.log.With("component", "test")
	derived.Info("before run")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	for b.Telemetry() == nil {
		select {
		case err := <-done:
			t.Fatalf("Run returned %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	derived.Info("after run")
	derived.Debug("below the level")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "before run") || !strings.Contains(out.String(), "after run") {
		t.Fatalf("console log:\n%s", out.String())
	}
	l, err := col.WaitLog(10*time.Second, func(l otlptest.Log) bool { return l.Body.GetStringValue() == "after run" })
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range l.Attributes {
		found = found || (a.GetKey() == "component" && a.GetValue().GetStringValue() == "test")
	}
	if !found {
		t.Errorf("derived logger's attributes not exported: %v", l.Attributes)
	}
	for _, l := range col.Logs() {
		if l.Body.GetStringValue() == "before run" || l.Body.GetStringValue() == "below the level" {
			t.Errorf("exported %q", l.Body.GetStringValue())
		}
	}

	// A caller-supplied Provider is used, not owned.
	p, err := telemetry.New(context.Background(), func() config.TelemetryConfig { c := config.Default(); enable(&c); return c.Telemetry }(), telemetry.Options{Version: Version})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	b2 := newObserved(t, enable, WithTelemetry(p))
	if b2.ownsTelemetry() || b2.Telemetry() != p {
		t.Fatal("WithTelemetry provider not used as given")
	}
}

func newScrape() *http.Request { return httptest.NewRequest(http.MethodGet, "/metrics", nil) }

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
