package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeDefaults(t *testing.T) {
	type layout struct {
		Producers, Consumers, Streams, Partitions int
		MessageBatches                            uint64
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want layout
	}{
		{"pinned producer", Config{Scenario: PinnedProducer}, layout{2, 0, 2, 1, 1000}},
		{"pinned consumer", Config{Scenario: PinnedConsumer, Consumers: 3}, layout{0, 3, 3, 1, 1000}},
		{"pinned pair", Config{Scenario: PinnedProducerAndConsumer}, layout{2, 2, 2, 1, 1000}},
		{"balanced producer", Config{Scenario: BalancedProducer, Producers: 4}, layout{4, 0, 1, 4, 1000}},
		{"balanced group two streams", Config{Scenario: BalancedConsumerGroup, Consumers: 5, Streams: 2}, layout{0, 5, 2, 3, 1000}},
		{"balanced both", Config{Scenario: BalancedProducerAndConsumerGroup}, layout{2, 2, 1, 2, 1000}},
		{"end to end", Config{Scenario: EndToEndProducingConsumer, Producers: 1}, layout{1, 0, 1, 1, 1000}},
		{"total data rounds up", Config{Scenario: PinnedProducer, TotalData: 2_500_000_000}, layout{2, 0, 2, 1, 1250}},
		{"total data below one batch", Config{Scenario: PinnedProducer, TotalData: 10}, layout{2, 0, 2, 1, 1}},
		{"duration has no count", Config{Scenario: PinnedProducer, Duration: time.Second}, layout{2, 0, 2, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			if err := c.Normalize(); err != nil {
				t.Fatal(err)
			}
			got := layout{c.Producers, c.Consumers, c.Streams, c.Partitions, c.MessageBatches}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
			if c.MessageSize != DefaultMessageSize || c.MessagesPerBatch != DefaultMessagesPerBatch || c.Username != DefaultUsername || c.Transport != "tcp" || c.SamplingTime != DefaultSamplingTime {
				t.Fatalf("defaults not applied: %+v", c)
			}
		})
	}
}

func TestNormalizeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown scenario", Config{Scenario: "fast"}, "unknown scenario"},
		{"consumers on a producer scenario", Config{Scenario: PinnedProducer, Consumers: 1}, "no separate consumers"},
		{"producers on a consumer scenario", Config{Scenario: PinnedConsumer, Producers: 1}, "no producers"},
		{"consumers on end to end", Config{Scenario: EndToEndProducingConsumer, Consumers: 1}, "no separate consumers"},
		{"pinned streams mismatch", Config{Scenario: PinnedProducer, Producers: 2, Streams: 3}, "--streams must be 2"},
		{"pinned partitions", Config{Scenario: PinnedProducer, Partitions: 2}, "--partitions must be 1"},
		{"unpaired", Config{Scenario: PinnedProducerAndConsumer, Producers: 2, Consumers: 3, Streams: 3}, "must be equal"},
		{"more streams than actors", Config{Scenario: BalancedProducer, Producers: 1, Streams: 2}, "at least one actor per stream"},
		{"two amounts", Config{Scenario: PinnedProducer, MessageBatches: 1, Duration: time.Second}, "one of"},
		{"count and data", Config{Scenario: PinnedProducer, MessageBatches: 1, TotalData: 5}, "one of"},
		{"group fill by time", Config{Scenario: BalancedConsumerGroup, Duration: time.Second}, "fixed fill"},
		{"huge message", Config{Scenario: PinnedProducer, MessageSize: MaxMessageSize + 1}, "--message-size"},
		{"huge batch", Config{Scenario: PinnedProducer, MessageSize: 1 << 20, MessagesPerBatch: 100}, "--messages-per-batch"},
		{"negative warmup", Config{Scenario: PinnedProducer, WarmupTime: -time.Second}, "negative"},
		{"too many actors", Config{Scenario: BalancedProducer, Producers: MaxActors + 1}, "within 0.."},
		{"unknown transport", Config{Scenario: PinnedProducer, Transport: "sctp"}, "want tcp, quic, ws or http"},
		{"http consumer group", Config{Scenario: BalancedConsumerGroup, Transport: "http"}, "HTTP API does not serve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			err := c.Normalize()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestCheckEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        Check
		consumes bool
		want     bool
	}{
		{"producer stored all", Check{Sent: 10, Stored: 10}, false, true},
		{"producer lost some", Check{Sent: 10, Stored: 9}, false, false},
		{"consumer read all", Check{Sent: 10, Stored: 10, Received: 10, Exact: true}, true, true},
		{"consumer short", Check{Sent: 10, Stored: 10, Received: 9, Exact: true}, true, false},
		{"consumer duplicates", Check{Sent: 10, Stored: 10, Received: 11, Exact: true}, true, false},
		{"re-reading consumer", Check{Sent: 10, Stored: 10, Received: 25}, true, true},
		{"retention removed some", Check{Sent: 10, Stored: 4, Received: 10, Exact: true, Retention: true}, true, true},
		{"retention cannot add", Check{Sent: 10, Stored: 11, Received: 10, Exact: true, Retention: true}, true, false},
		{"retention, consumer short", Check{Sent: 10, Stored: 4, Received: 9, Exact: true, Retention: true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.evaluate(tc.consumes)
			if c.OK != tc.want {
				t.Fatalf("OK %v, want %v (%s)", c.OK, tc.want, c)
			}
		})
	}
}

// fullResult has every optional part set.
func fullResult() *Result {
	var lat, age Histogram
	for i := range 100 {
		lat.Record(time.Duration(i+1) * 37 * time.Microsecond)
		age.Record(time.Duration(i+1) * time.Millisecond)
	}
	p := uint32(0)
	s := Summarize(&age)
	series := Series{IntervalMillis: 100, MBps: []float64{1.5, 2.25}, MsgsPerS: []float64{1500, 2250}}
	return &Result{
		Version: ResultVersion, Name: "x", Scenario: EndToEndProducingConsumer,
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Params:    Params{Producers: 1, Streams: 1, Partitions: 1, MessageSize: 1000, MessagesPerBatch: 1000, MessageBatches: 10, EnforceFsync: true, Server: "embedded", Transport: "tcp"},
		Env:       Env{GoVersion: "go1", OS: "linux", Arch: "amd64", CPUs: 2, GOMAXPROCS: 2, CPUModel: "cpu", LoadBefore: 1.5, LoadAfter: 2},
		Baseline:  &Baseline{Seconds: 2, Bytes: 1 << 30, BufferSize: BaselineBufferSize, MBps: 536.870912},
		Fill:      &Fill{Messages: 5, Bytes: 5000, Seconds: 0.25},
		Seconds:   1.25,
		Actors: []Actor{{
			Kind: KindProducingConsumer, ID: 1, Stream: "bench-1", Partition: &p, Messages: 10000, Batches: 10,
			PayloadBytes: 10_000_000, WireBytes: 10_642_560, TotalMessages: 10000, Seconds: 1.25, MBps: 8, WireMBps: 8.5, MsgsPerS: 8000,
			Latency: Summarize(&lat), Age: &s, Series: series, Histogram: &lat, AgeHistogram: &age,
		}},
		Groups: []Group{{Kind: KindProducingConsumer, Actors: 1, Messages: 10000, Latency: Summarize(&lat), Age: &s, Series: series}},
		Check:  Check{Sent: 10000, Stored: 10000, Received: 10000, Exact: true, OK: true},
	}
}

func TestResultJSONRoundTrip(t *testing.T) {
	r := fullResult()
	dir := t.TempDir()
	jsonPath, htmlPath, err := r.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(r, back, histComparer); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	checkHTML(t, string(page))
}

func TestReadResultRefuses(t *testing.T) {
	dir := t.TempDir()
	other := fullResult()
	other.Version = ResultVersion + 1
	newer, _ := json.Marshal(other)
	for _, tc := range []struct{ name, data, want string }{
		{"not json", "{", "decode"},
		{"newer version", string(newer), "version"},
		{"bad histogram", `{"version":1,"actors":[{"latency_histogram":{"sub_bucket_bits":3}}]}`, "histogram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "r.json")
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadResult(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ReadResult(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestHTMLWithoutMeasurements(t *testing.T) {
	// A run where nothing was measured (or a kind read nothing) still
	// renders: empty series, empty histograms, no baseline.
	r := &Result{Version: ResultVersion, Name: "<empty>", Scenario: PinnedProducer,
		Actors: []Actor{{Kind: KindProducer, ID: 1, Histogram: &Histogram{}}},
		Groups: []Group{{Kind: KindProducer, Actors: 1}}}
	var b strings.Builder
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<empty>") || !strings.Contains(page, "&lt;empty&gt;") || !strings.Contains(page, "No baseline") {
		t.Fatalf("page does not escape names or mention the missing baseline:\n%s", page)
	}
	if n := len(svgRE.FindAllString(page, -1)); n != 3 {
		t.Fatalf("%d charts", n)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		hi   float64
		want []string
	}{
		{0, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
		{1000, []string{"0", "200", "400", "600", "800", "1000"}},
		{1.71, []string{"0", "0.5", "1", "1.5", "2"}},
		{0.004, []string{"0", "0.001", "0.002", "0.003", "0.004"}},
		{0.0012, []string{"0", "0.00025", "0.0005", "0.00075", "0.001", "0.00125"}},
	} {
		var got []string
		ts := niceTicks(tc.hi, 5)
		for _, x := range ts {
			got = append(got, x.label)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("niceTicks(%g) (-want +got):\n%s", tc.hi, d)
		}
		if last := ts[len(ts)-1].at; last < tc.hi {
			t.Errorf("niceTicks(%g) ends at %g", tc.hi, last)
		}
	}
}
