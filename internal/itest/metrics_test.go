package itest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/metrics"
	"github.com/iggo-dev/iggo/wire"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The /metrics registry after real traffic through the Go SDK: the
// reference's eight parity families and the Iggo families move as the
// traffic says (docs/OBSERVABILITY.md).

func obsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func obsClient(t *testing.T, s *Server) *client.Client {
	t.Helper()
	c, err := client.Dial(obsCtx(t), s.Addr, client.WithCredentials(RootUsername, RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// scrapeMetrics serves the broker's metrics handler once and parses the
// exposition with the Prometheus text parser.
func scrapeMetrics(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Broker.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != metrics.ContentType {
		t.Fatalf("scrape: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return fams
}

// sample returns the value of the first sample of name whose labels
// include the pairs of labels (histograms: the sample count).
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func mustSample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sample(fams, name, labels...)
	if !ok {
		t.Fatalf("no sample %s%v", name, labels)
	}
	return v
}

func TestMetricsAfterTraffic(t *testing.T) {
	s := Start(t)
	fams := scrapeMetrics(t, s)
	for _, name := range []string{"streams", "topics", "partitions", "segments", "messages", "users", "clients"} {
		f := fams[name]
		if f == nil || f.GetType() != dto.MetricType_GAUGE || f.GetHelp() != "total count of "+name+"." {
			t.Fatalf("parity gauge %s: %v", name, f)
		}
	}
	if f := fams["http_requests_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("http_requests_total: %v", f)
	}
	if v := mustSample(t, fams, "users"); v != 1 {
		t.Fatalf("users = %v before traffic, want 1 (root)", v)
	}
	if v := mustSample(t, fams, "streams"); v != 0 {
		t.Fatalf("streams = %v before traffic", v)
	}

	ctx := obsCtx(t)
	c := obsClient(t, s)
	stream, topic := wire.NamedID("metrics-s"), wire.NamedID("metrics-t")
	if _, err := c.CreateStream(ctx, "metrics-s"); err != nil {
		t.Fatal(err)
	}
	// enforce_fsync: every append is a sync round (the fsync histogram).
	if _, err := c.CreateTopic(ctx, stream, "metrics-t", 2, wire.BoolOption("enforce_fsync", true)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateConsumerGroup(ctx, stream, topic, "lagging"); err != nil {
		t.Fatal(err)
	}
	if err := c.JoinConsumerGroup(ctx, stream, topic, wire.NamedID("lagging")); err != nil {
		t.Fatal(err)
	}
	send := func(partition uint32, n int) {
		msgs := make([]wire.Message, n)
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(partition)<<32 | uint64(i+1)}, Payload: []byte("metrics payload")}
		}
		if _, err := c.SendMessages(ctx, stream, topic, wire.PartitioningByID(partition), msgs); err != nil {
			t.Fatal(err)
		}
	}
	send(0, 6)
	send(0, 4)
	send(1, 5)
	group := wire.GroupConsumer(wire.NamedID("lagging"))
	polled, err := c.PollMessages(ctx, wire.PollMessages{Consumer: group, StreamID: stream, TopicID: topic,
		Partition: wire.OptPartition{Present: true, ID: 0}, Strategy: wire.FirstStrategy(), Count: 4})
	if err != nil || polled.Count != 4 {
		t.Fatalf("poll: %v %+v", err, polled)
	}
	if err := c.StoreConsumerOffset(ctx, group, stream, topic, wire.OptPartition{Present: true, ID: 0}, 3); err != nil {
		t.Fatal(err)
	}
	// A send to a missing stream is a status-deny ResourceNotFound (20).
	if _, err := c.SendMessages(ctx, wire.NamedID("no-such-stream"), topic, wire.PartitioningByID(0),
		[]wire.Message{{ID: wire.Uint128{Lo: 99}, Payload: []byte("x")}}); err == nil {
		t.Fatal("a send to a missing stream succeeded")
	}

	fams = scrapeMetrics(t, s)
	for name, want := range map[string]float64{"streams": 1, "topics": 1, "partitions": 2, "messages": 15, "users": 1, "clients": 1} {
		if got := mustSample(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := mustSample(t, fams, "segments"); got < 2 {
		t.Errorf("segments = %v, want at least one per partition", got)
	}
	topicLabels := []string{"stream", "metrics-s", "topic", "metrics-t"}
	if got := mustSample(t, fams, "iggo_topic_messages_in_total", topicLabels...); got != 15 {
		t.Errorf("messages in = %v, want 15", got)
	}
	if got := mustSample(t, fams, "iggo_topic_messages_out_total", topicLabels...); got != 4 {
		t.Errorf("messages out = %v, want 4", got)
	}
	in := mustSample(t, fams, "iggo_topic_bytes_in_total", topicLabels...)
	out := mustSample(t, fams, "iggo_topic_bytes_out_total", topicLabels...)
	// Three batches in (one header each plus 15 frames), one 4-message
	// slice out; each frame is a 64-byte header plus the payload.
	frame := float64(wire.MessageHeaderSize + len("metrics payload"))
	if in != 3*wire.BatchHeaderSize+15*frame || out < 4*frame || out >= in {
		t.Errorf("bytes in %v out %v (frame %v)", in, out, frame)
	}
	lag := func(p string) float64 {
		return mustSample(t, fams, "iggo_consumer_group_lag", "stream", "metrics-s", "topic", "metrics-t", "group", "lagging", "partition", p)
	}
	if got := lag("0"); got != 6 { // current offset 9, committed 3
		t.Errorf("lag on partition 0 = %v, want 6", got)
	}
	if got := lag("1"); got != 5 { // nothing committed: all 5 messages
		t.Errorf("lag on partition 1 = %v, want 5", got)
	}
	if got := mustSample(t, fams, "iggo_connections", "transport", "tcp"); got != 1 {
		t.Errorf("tcp connections = %v, want 1", got)
	}
	if got := mustSample(t, fams, "iggo_request_duration_seconds", "command", "send_messages", "transport", "tcp"); got != 4 { // 3 stored, 1 denied
		t.Errorf("send_messages requests = %v, want 4", got)
	}
	if got := mustSample(t, fams, "iggo_request_duration_seconds", "command", "poll_messages", "transport", "tcp"); got != 1 {
		t.Errorf("poll_messages requests = %v, want 1", got)
	}
	if got := mustSample(t, fams, "iggo_responses_total", "status", "0", "transport", "tcp"); got < 8 {
		t.Errorf("successful answers = %v, want at least 8", got)
	}
	if got := mustSample(t, fams, "iggo_responses_total", "status", "20", "transport", "tcp"); got != 1 {
		t.Errorf("ResourceNotFound answers = %v, want 1", got)
	}
	if got := mustSample(t, fams, "iggo_storage_write_duration_seconds"); got != 3 {
		t.Errorf("storage writes = %v, want 3", got)
	}
	if got := mustSample(t, fams, "iggo_storage_fsync_duration_seconds"); got < 3 {
		t.Errorf("fsync rounds = %v, want one per enforce_fsync append", got)
	}
	if got := mustSample(t, fams, "iggo_storage_written_bytes_total"); got != in {
		t.Errorf("storage bytes %v, want the %v bytes appended", got, in)
	}
	if got := mustSample(t, fams, "iggo_transport_received_bytes_total", "transport", "tcp"); got < in {
		t.Errorf("received bytes %v below the appended %v", got, in)
	}
	if got := mustSample(t, fams, "iggo_transport_sent_bytes_total", "transport", "tcp"); got < out {
		t.Errorf("sent bytes %v below the polled %v", got, out)
	}

	// Closing the client is seen at the next scrape.
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams = scrapeMetrics(t, s)
		if mustSample(t, fams, "clients") == 0 && mustSample(t, fams, "iggo_connections", "transport", "tcp") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("clients gauge did not drop after the client closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPrometheusScrapesMetrics runs a real Prometheus server (Debian's
// prometheus package) that scrapes the registry behind a bearer token,
// and queries what it stored. It is skipped, saying so, where the binary
// is not installed, except in CI (CI set), whose script installs it.
func TestPrometheusScrapesMetrics(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed; .ci/run installs it with apt-get")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus); the scrape by a real server is not checked")
	}
	if testing.Short() {
		t.Skip("runs a Prometheus server")
	}
	s := Start(t)
	ctx := obsCtx(t)
	c := obsClient(t, s)
	if _, err := c.CreateStream(ctx, "scraped"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, wire.NamedID("scraped"), "t", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessages(ctx, wire.NamedID("scraped"), wire.NamedID("t"), wire.PartitioningByID(1),
		[]wire.Message{{ID: wire.Uint128{Lo: 1}, Payload: []byte("a")}, {ID: wire.Uint128{Lo: 2}, Payload: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	const token = "scrape-secret"
	var scrapes atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		scrapes.Add(1)
		s.Broker.Metrics().Handler().ServeHTTP(w, r)
	}))
	defer target.Close()

	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: iggo
    metrics_path: /metrics
    authorization:
      credentials: %s
    static_configs:
      - targets: ["%s"]
`, token, strings.TrimPrefix(target.URL, "http://"))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web := ln.Addr().String()
	ln.Close()
	var out syncBuf
	runCtx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(runCtx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stop()
		_ = cmd.Wait()
	}()

	query := func(q string) (string, error) {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var body struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return "", err
		}
		if body.Status != "success" || len(body.Data.Result) == 0 {
			return "", fmt.Errorf("no result for %s (%s)", q, body.Status)
		}
		v, _ := body.Data.Result[0].Value[1].(string)
		return v, nil
	}
	want := map[string]string{
		`up{job="iggo"}`:      "1",
		"streams":             "1",
		"partitions":          "3",
		"messages":            "2",
		"users":               "1",
		"clients":             "1",
		"http_requests_total": "0",
		`iggo_topic_messages_in_total{stream="scraped",topic="t"}`:                     "2",
		`iggo_request_duration_seconds_count{command="send_messages",transport="tcp"}`: "1",
		`sum(iggo_responses_total{status="0"}) > 0`:                                    "",
	}
	deadline := time.Now().Add(45 * time.Second)
	for q, v := range want {
		for {
			got, err := query(q)
			if err == nil && (v == "" || got == v) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus query %s = %q (%v), want %q; %d scrapes served; prometheus log:\n%s", q, got, err, v, scrapes.Load(), out.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
