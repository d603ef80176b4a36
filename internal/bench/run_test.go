package bench

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/iggo-dev/iggo/server"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startBroker runs one broker for the subtests of a test; each run uses
// its own stream prefix.
func startBroker(t *testing.T) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.TCP.Address = "127.0.0.1:0"
	cfg.System.Path = t.TempDir()
	cfg.QUIC.Address, cfg.WebSocket.Address = "127.0.0.1:0", "127.0.0.1:0"
	cfg.HTTP.Address = "127.0.0.1:0"
	srv, err := server.New(cfg, server.WithRootCredentials(DefaultUsername, DefaultPassword), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		if err := srv.Shutdown(sctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		cancel()
		<-done
	})
	return srv.Addr().String()
}

// small is a short workload: 2 actors, batches of 10 messages of 100
// bytes.
func small(s Scenario, addr string) Config {
	return Config{
		Scenario: s, Addr: addr, MessageSize: 100, MessagesPerBatch: 10, MessageBatches: 5,
		SamplingTime: 5 * time.Millisecond, StreamPrefix: "t-" + string(s),
	}
}

// histComparer compares histograms by content.
var histComparer = cmp.Comparer(func(a, b *Histogram) bool {
	if a == nil || b == nil {
		return a == b
	}
	return histEqual(a, b)
})

// runAndRead runs cfg with an output directory and reads the result file
// back, checking it equals the returned result and the chart is there.
func runAndRead(t *testing.T, cfg Config) *Result {
	t.Helper()
	cfg.OutputDir = t.TempDir()
	cfg.Name = "run"
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadResult(filepath.Join(cfg.OutputDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The disk baseline's directory is not written to the file.
	if d := cmp.Diff(res, back, histComparer, cmpopts.IgnoreFields(DiskBaseline{}, "Dir")); d != "" {
		t.Fatalf("result file differs from the result (-run +file):\n%s", d)
	}
	page, err := os.ReadFile(filepath.Join(cfg.OutputDir, "run.html"))
	if err != nil {
		t.Fatal(err)
	}
	checkHTML(t, string(page))
	return back
}

var svgRE = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// checkHTML checks the page has its three charts (five with the broker
// process charts), each well-formed XML.
func checkHTML(t *testing.T, page string) {
	t.Helper()
	svgs := svgRE.FindAllString(page, -1)
	want := 3
	if strings.Contains(page, "Broker process over time") {
		want = 5
	}
	if len(svgs) != want || !strings.HasSuffix(page, "</html>\n") {
		t.Fatalf("chart page has %d svg elements", len(svgs))
	}
	for _, s := range svgs {
		d := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := d.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("svg is not well-formed: %v\n%s", err, s)
				}
				break
			}
		}
		if !strings.Contains(s, "<polyline") && !strings.Contains(s, "<rect x=\"240\"") {
			t.Fatalf("svg without data:\n%s", s)
		}
	}
}

// checkComplete checks a result's internal consistency: actors of each
// kind as configured, every actor measured, histograms matching batch
// counts, kind sums matching actor sums, and the accounting.
func checkComplete(t *testing.T, cfg Config, r *Result) {
	t.Helper()
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	counted := cfg.Duration == 0
	want := map[ActorKind]int{}
	switch {
	case cfg.Scenario == EndToEndProducingConsumer:
		want[KindProducingConsumer] = cfg.Producers
	default:
		if cfg.Producers > 0 {
			want[KindProducer] = cfg.Producers
		}
		if cfg.Consumers > 0 {
			want[KindConsumer] = cfg.Consumers
		}
	}
	got := map[ActorKind]int{}
	sums := map[ActorKind]Group{}
	var received uint64
	// Group members beyond the partitions may get none and read nothing.
	idle := 0
	if !cfg.Scenario.Pinned() {
		idle = max(cfg.Consumers-cfg.Streams*cfg.Partitions, 0)
	}
	for _, a := range r.Actors {
		got[a.Kind]++
		name := fmt.Sprintf("%s %d", a.Kind, a.ID)
		quiet := a.Kind == KindConsumer && a.Batches == 0 && idle > 0
		if quiet {
			idle--
		}
		if !quiet && (a.Messages == 0 || a.Batches == 0 || a.PayloadBytes != a.Messages*uint64(cfg.MessageSize) || a.WireBytes <= a.PayloadBytes) {
			t.Errorf("%s: messages %d batches %d payload %d wire %d", name, a.Messages, a.Batches, a.PayloadBytes, a.WireBytes)
		}
		if a.Histogram == nil || a.Histogram.Count() != a.Batches || a.Latency.Count != a.Batches || a.Latency.Max < a.Latency.P50 || !quiet && a.Latency.P50 <= 0 {
			t.Errorf("%s: latency %+v for %d batches", name, a.Latency, a.Batches)
		}
		if !quiet && (a.Seconds <= 0 || a.MBps <= 0 || a.MsgsPerS <= 0 || len(a.Series.MBps) == 0 || a.TotalMessages < a.Messages) {
			t.Errorf("%s: seconds %v MB/s %v msg/s %v series %d total %d", name, a.Seconds, a.MBps, a.MsgsPerS, len(a.Series.MBps), a.TotalMessages)
		}
		if a.Kind == KindProducer || a.Kind == KindProducingConsumer {
			if counted && a.Messages != cfg.MessageBatches*uint64(cfg.MessagesPerBatch) {
				t.Errorf("%s: %d measured messages, want %d", name, a.Messages, cfg.MessageBatches*uint64(cfg.MessagesPerBatch))
			}
		}
		if a.Kind == KindConsumer || a.Kind == KindProducingConsumer {
			received += a.TotalMessages
		}
		trackAge := a.Kind == KindProducingConsumer || a.Kind == KindConsumer && cfg.Scenario.Produces()
		if trackAge != (a.Age != nil && a.AgeHistogram != nil && a.Age.Count > 0) {
			t.Errorf("%s: message age %+v, want it: %v", name, a.Age, trackAge)
		}
		pinned := a.Partition != nil && *a.Partition == 0
		if pinned != (cfg.Scenario.Pinned()) || (a.Group != "") != (a.Kind == KindConsumer && !cfg.Scenario.Pinned()) {
			t.Errorf("%s: partition %v group %q", name, a.Partition, a.Group)
		}
		s := sums[a.Kind]
		s.Actors++
		s.Messages += a.Messages
		s.Batches += a.Batches
		s.PayloadBytes += a.PayloadBytes
		s.WireBytes += a.WireBytes
		sums[a.Kind] = s
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("actors by kind (-want +got):\n%s", d)
	}
	if len(r.Groups) != len(want) {
		t.Errorf("%d groups, want %d", len(r.Groups), len(want))
	}
	for _, g := range r.Groups {
		s := sums[g.Kind]
		if g.Actors != s.Actors || g.Messages != s.Messages || g.Batches != s.Batches || g.PayloadBytes != s.PayloadBytes || g.WireBytes != s.WireBytes {
			t.Errorf("group %s %+v does not sum its actors %+v", g.Kind, g, s)
		}
		if g.Latency.Count != g.Batches || g.MBps <= 0 || len(g.Series.MBps) == 0 {
			t.Errorf("group %s: latency %+v, MB/s %v", g.Kind, g.Latency, g.MBps)
		}
	}
	c := r.Check
	if !c.OK || c.Stored != c.Sent || c.Sent == 0 {
		t.Errorf("check %s", c)
	}
	if cfg.Scenario.Consumes() {
		if !c.Exact && !(cfg.Scenario == PinnedConsumer && !counted) {
			t.Errorf("check not exact: %s", c)
		}
		if c.Exact && c.Received != c.Sent {
			t.Errorf("sent %d, received %d", c.Sent, c.Received)
		}
		if received != c.Received {
			t.Errorf("consumers report %d messages, check %d", received, c.Received)
		}
	}
	if cfg.Scenario.fillsFirst() {
		fill := uint64(cfg.Consumers) * cfg.MessageBatches * uint64(cfg.MessagesPerBatch)
		if !counted {
			fill = uint64(cfg.Consumers) * durationFillBatches * uint64(cfg.MessagesPerBatch)
		}
		if r.Fill == nil || r.Fill.Messages != fill || c.Sent != fill {
			t.Errorf("fill %+v, sent %d, want %d", r.Fill, c.Sent, fill)
		}
	}
	if r.Seconds <= 0 || r.Env.CPUs == 0 || r.Params.MessageSize != cfg.MessageSize || r.Version != ResultVersion {
		t.Errorf("result header: seconds %v env %+v params %+v", r.Seconds, r.Env, r.Params)
	}
}

// TestEveryScenario runs each scenario briefly against one broker and
// checks the result file is complete and the counts add up.
func TestEveryScenario(t *testing.T) {
	addr := startBroker(t)
	for _, s := range Scenarios {
		t.Run(string(s), func(t *testing.T) {
			cfg := small(s, addr)
			r := runAndRead(t, cfg)
			checkComplete(t, cfg, r)
		})
	}
}

// TestVariants covers warmup, duration, rate limit, total data, wider
// balanced layouts and fsync.
func TestVariants(t *testing.T) {
	addr := startBroker(t)
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"pinned-consumer warmup", func(c *Config) {
			c.Scenario, c.WarmupTime = PinnedConsumer, 30*time.Millisecond
		}},
		{"pinned-consumer duration re-reads the fill", func(c *Config) {
			c.Scenario, c.MessageBatches, c.Duration, c.Consumers = PinnedConsumer, 0, 150*time.Millisecond, 1
		}},
		{"pinned-producer-and-consumer warmup", func(c *Config) {
			c.Scenario, c.WarmupTime = PinnedProducerAndConsumer, 30*time.Millisecond
		}},
		{"balanced-producer-and-consumer-group duration", func(c *Config) {
			c.Scenario, c.MessageBatches, c.Duration = BalancedProducerAndConsumerGroup, 0, 150*time.Millisecond
		}},
		{"balanced-consumer-group warmup, 2 streams, more consumers than partitions", func(c *Config) {
			c.Scenario, c.Streams, c.Consumers, c.Partitions, c.WarmupTime = BalancedConsumerGroup, 2, 5, 2, 30*time.Millisecond
		}},
		{"balanced-producer 3 producers 2 streams total data", func(c *Config) {
			c.Scenario, c.Producers, c.Streams, c.MessageBatches, c.TotalData = BalancedProducer, 3, 2, 0, 3*5*10*100
		}},
		{"end-to-end fsync", func(c *Config) {
			c.Scenario, c.EnforceFsync = EndToEndProducingConsumer, true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small(PinnedProducer, addr)
			tc.edit(&cfg)
			cfg.StreamPrefix = "v-" + string(cfg.Scenario)
			r := runAndRead(t, cfg)
			checkComplete(t, cfg, r)
		})
	}
}

// TestRateLimit checks the pacing bound: n batches of B bytes at rate R
// take at least (n-1)·B/R from the first send to the last, so the
// measured rate is at most R·n/(n-1) (a lower bound on time: a slow
// machine only lowers the rate).
func TestRateLimit(t *testing.T) {
	addr := startBroker(t)
	cfg := small(PinnedProducer, addr)
	cfg.Producers, cfg.MessageBatches, cfg.RateLimit = 2, 6, 200_000 // 100 kB/s per producer, 1 kB batches
	r := runAndRead(t, cfg)
	checkComplete(t, cfg, r)
	limit := 100_000.0 / MB * 6 / 5 * 1.01
	for _, a := range r.Actors {
		if a.MBps > limit {
			t.Errorf("producer %d: %.4f MB/s over the limit %.4f", a.ID, a.MBps, limit)
		}
	}
}

// TestEmbeddedTLS runs without an address (the embedded broker) over TLS,
// with the loopback baseline.
func TestEmbeddedTLS(t *testing.T) {
	cfg := small(PinnedProducerAndConsumer, "")
	cfg.TLS, cfg.Baseline, cfg.Producers, cfg.Consumers = true, 20*time.Millisecond, 1, 1
	var progress strings.Builder
	cfg.Progress, cfg.ProgressANSI = &syncWriter{w: &progress}, true
	r := runAndRead(t, cfg)
	checkComplete(t, cfg, r)
	if r.Params.Server != "embedded" || !r.Params.TLS || r.Baseline == nil || r.Baseline.Bytes == 0 || r.Baseline.MBps <= 0 {
		t.Fatalf("server %q tls %v baseline %+v", r.Params.Server, r.Params.TLS, r.Baseline)
	}
	for _, want := range []string{"producer 1", "consumer 1", "100.0%"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	var report strings.Builder
	if err := WriteReport(&report, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"loopback TCP baseline", "producer 1", "consumer 1", "all producers (1)", "message age", "check: sent 50, stored 50, received 50: ok"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
}

// TestEmbeddedTransports runs a producing and consuming scenario over QUIC,
// WebSocket and WSS against the embedded broker: every message is counted
// through, and the result records the transport.
func TestEmbeddedTransports(t *testing.T) {
	for _, tc := range []struct {
		transport string
		tls       bool
	}{{"quic", false}, {"ws", false}, {"ws", true}} {
		t.Run(fmt.Sprintf("%s tls=%v", tc.transport, tc.tls), func(t *testing.T) {
			cfg := small(PinnedProducerAndConsumer, "")
			cfg.Transport, cfg.TLS, cfg.Producers, cfg.Consumers = tc.transport, tc.tls, 1, 1
			r := runAndRead(t, cfg)
			checkComplete(t, cfg, r)
			if r.Params.Transport != tc.transport || r.Params.TLS != tc.tls {
				t.Fatalf("params: transport %q tls %v", r.Params.Transport, r.Params.TLS)
			}
		})
	}
}

// TestRunRefusesBadConfig checks Run validates before doing anything.
func TestRunRefusesBadConfig(t *testing.T) {
	if _, err := Run(t.Context(), Config{Scenario: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err %v", err)
	}
}

// TestRunFailsOnUnreachableServer checks a connection failure is an
// error, not a hang.
func TestRunFailsOnUnreachableServer(t *testing.T) {
	cfg := small(PinnedProducer, "127.0.0.1:1")
	if _, err := Run(t.Context(), cfg); err == nil {
		t.Fatal("no error")
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
