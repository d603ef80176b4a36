package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape serves r.Handler once and parses the body with the Prometheus
// text parser.
func scrape(t *testing.T, r *Registry) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
	r.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != ContentType {
		t.Fatalf("content type %q, want %q", ct, ContentType)
	}
	body := rec.Body.String()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, body)
	}
	return fams, body
}

// value returns the value of the sample of family name whose labels
// include every pair of want ("k", "v", ...); ok false when none does.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == want[i] && lp.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
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

func TestParityFamilies(t *testing.T) {
	src := SourceFunc(func() Sample {
		return Sample{Streams: 2, Topics: 3, Partitions: 7, Segments: 9, Messages: 100, Users: 4, Clients: 5}
	})
	r := New(Options{Source: src, NoRuntime: true})
	r.ObserveHTTP("GET /streams", "GET", 200, time.Millisecond)
	r.ObserveHTTP("OPTIONS /streams", "OPTIONS", 204, time.Millisecond)
	fams, body := scrape(t, r)
	want := map[string]float64{"streams": 2, "topics": 3, "partitions": 7, "segments": 9, "messages": 100, "users": 4, "clients": 5}
	for name, v := range want {
		f := fams[name]
		if f == nil || f.GetType() != dto.MetricType_GAUGE {
			t.Fatalf("family %s missing or not a gauge", name)
		}
		if len(f.GetMetric()[0].GetLabel()) != 0 {
			t.Errorf("%s has labels", name)
		}
		if got, _ := value(fams, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
		if f.GetHelp() != "total count of "+name+"." {
			t.Errorf("%s help %q", name, f.GetHelp())
		}
	}
	if f := fams["http_requests_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER || f.GetHelp() != "total count of http_requests." {
		t.Fatalf("http_requests_total: %v", f)
	}
	if got, _ := value(fams, "http_requests_total"); got != 2 {
		t.Errorf("http_requests_total = %v, want 2", got)
	}
	if got, _ := value(fams, "iggo_http_request_duration_seconds", "route", "GET /streams", "method", "GET", "status", "200"); got != 1 {
		t.Errorf("http histogram count = %v, want 1", got)
	}
	if !strings.Contains(body, "\nstreams 2\n") {
		t.Errorf("exposition lacks the plain sample line `streams 2`:\n%s", body)
	}
}

func TestRequestFamilies(t *testing.T) {
	r := New(Options{NoRuntime: true})
	r.Observe(dispatch.Observation{Code: wire.CmdSendMessages, Transport: session.TransportTCP, Duration: 3 * time.Millisecond, RequestBytes: 1000, ReplyBytes: 276})
	r.Observe(dispatch.Observation{Code: wire.CmdSendMessages, Transport: session.TransportTCP, Status: wire.ErrResourceNotFound.Code, RequestBytes: 300, ReplyBytes: 256})
	r.Observe(dispatch.Observation{Code: wire.CmdPing, Transport: session.TransportQUIC, RequestBytes: 256, ReplyBytes: 256})
	r.Observe(dispatch.Observation{Code: 999, Transport: session.TransportWebSocket, Evicted: true})
	r.Observe(dispatch.Observation{Code: wire.CmdPing, Transport: 9, Status: 65000})
	r.Observe(dispatch.Observation{Code: wire.CmdGetStreams, Transport: session.TransportHTTP})
	fams, _ := scrape(t, r)
	checks := []struct {
		name  string
		label []string
		want  float64
	}{
		{"iggo_request_duration_seconds", []string{"command", "send_messages", "transport", "tcp"}, 2},
		{"iggo_request_duration_seconds", []string{"command", "ping", "transport", "quic"}, 1},
		{"iggo_request_duration_seconds", []string{"command", "unknown", "transport", "websocket"}, 1},
		{"iggo_request_duration_seconds", []string{"command", "ping", "transport", "other"}, 1},
		{"iggo_request_duration_seconds", []string{"command", "get_streams", "transport", "http"}, 1},
		{"iggo_responses_total", []string{"status", "0", "transport", "tcp"}, 1},
		{"iggo_responses_total", []string{"status", "20", "transport", "tcp"}, 1},
		{"iggo_responses_total", []string{"status", "eviction", "transport", "websocket"}, 1},
		{"iggo_responses_total", []string{"status", "other", "transport", "other"}, 1},
		{"iggo_transport_received_bytes_total", []string{"transport", "tcp"}, 1300},
		{"iggo_transport_sent_bytes_total", []string{"transport", "tcp"}, 532},
		{"iggo_transport_received_bytes_total", []string{"transport", "quic"}, 256},
	}
	for _, c := range checks {
		got, ok := value(fams, c.name, c.label...)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.label, got, ok, c.want)
		}
	}
	// The slow request lands in the 2.56 ms..10.24 ms bucket, not below.
	h := fams["iggo_request_duration_seconds"]
	for _, m := range h.GetMetric() {
		if m.GetHistogram().GetSampleCount() == 2 {
			if s := m.GetHistogram().GetSampleSum(); s < 0.003 || s > 0.0031 {
				t.Errorf("histogram sum %v, want 0.003", s)
			}
		}
	}
}

// TestObserveAllocatesNothing is the hot-path proof: after the first
// request of a kind, counting a request allocates nothing.
func TestObserveAllocatesNothing(t *testing.T) {
	r := New(Options{NoRuntime: true})
	obs := []dispatch.Observation{
		{Code: wire.CmdSendMessages, Transport: session.TransportTCP, Duration: time.Millisecond, RequestBytes: 4096, ReplyBytes: 276},
		{Code: wire.CmdPollMessages, Transport: session.TransportQUIC, Status: wire.ErrUnauthorized.Code},
		{Code: wire.CmdPing, Transport: session.TransportWebSocket, Evicted: true},
	}
	for _, o := range obs {
		r.Observe(o)
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		r.Observe(obs[i%len(obs)])
		r.StorageWrite(time.Microsecond, 100)
		r.StorageSync(time.Millisecond)
		i++
	}); n != 0 {
		t.Fatalf("Observe allocates %.1f times per request", n)
	}
}

func TestStateFamilies(t *testing.T) {
	src := SourceFunc(func() Sample {
		return Sample{
			Connections: map[string]int{"tcp": 3, "websocket": 1},
			Traffic:     []TopicTraffic{{Stream: "s", Topic: "t", MessagesIn: 10, BytesIn: 1000, MessagesOut: 4, BytesOut: 400}},
			Lag:         []GroupLag{{Stream: "s", Topic: "t", Group: "g", Partition: 1, Lag: 6}},
		}
	})
	r := New(Options{Source: src, NoRuntime: true})
	r.StorageWrite(2*time.Microsecond, 512)
	r.StorageSync(5 * time.Millisecond)
	fams, _ := scrape(t, r)
	checks := []struct {
		name  string
		label []string
		want  float64
	}{
		{"iggo_connections", []string{"transport", "tcp"}, 3},
		{"iggo_connections", []string{"transport", "quic"}, 0},
		{"iggo_connections", []string{"transport", "websocket"}, 1},
		{"iggo_topic_messages_in_total", []string{"stream", "s", "topic", "t"}, 10},
		{"iggo_topic_bytes_in_total", []string{"stream", "s", "topic", "t"}, 1000},
		{"iggo_topic_messages_out_total", []string{"stream", "s", "topic", "t"}, 4},
		{"iggo_topic_bytes_out_total", []string{"stream", "s", "topic", "t"}, 400},
		{"iggo_consumer_group_lag", []string{"stream", "s", "topic", "t", "group", "g", "partition", "1"}, 6},
		{"iggo_storage_write_duration_seconds", nil, 1},
		{"iggo_storage_fsync_duration_seconds", nil, 1},
		{"iggo_storage_written_bytes_total", nil, 512},
	}
	for _, c := range checks {
		got, ok := value(fams, c.name, c.label...)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.label, got, ok, c.want)
		}
	}
	if _, ok := fams["iggo_raft_term"]; ok {
		t.Error("raft families without a RaftSource")
	}
}

type fakeRaft struct {
	s  RaftStatus
	ok bool
}

func (f *fakeRaft) RaftStatus() (RaftStatus, bool) { return f.s, f.ok }

func TestRaftFamilies(t *testing.T) {
	f := &fakeRaft{}
	r := New(Options{Raft: f, NoRuntime: true})
	if fams, _ := scrape(t, r); fams["iggo_raft_term"] != nil {
		t.Fatal("raft families reported before consensus runs")
	}
	f.s, f.ok = RaftStatus{Term: 7, CommitIndex: 42, Leader: 2, Self: 2}, true
	fams, _ := scrape(t, r)
	for name, want := range map[string]float64{"iggo_raft_term": 7, "iggo_raft_commit_index": 42, "iggo_raft_leader_id": 2, "iggo_raft_is_leader": 1} {
		if got, ok := value(fams, name); !ok || got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	f.s.Self = 3
	fams, _ = scrape(t, r)
	if got, _ := value(fams, "iggo_raft_is_leader"); got != 0 {
		t.Errorf("follower reports is_leader %v", got)
	}
}

func TestLag(t *testing.T) {
	cases := []struct {
		current, messages, committed uint64
		ok                           bool
		want                         uint64
	}{
		{current: 9, messages: 10, ok: false, want: 10},
		{current: 9, messages: 10, committed: 4, ok: true, want: 5},
		{current: 9, messages: 10, committed: 9, ok: true, want: 0},
		{current: 9, messages: 10, committed: 12, ok: true, want: 0},
		{current: 0, messages: 0, ok: false, want: 0},
		{current: 0, messages: 1, committed: 0, ok: true, want: 0},
	}
	for _, c := range cases {
		if got := Lag(c.current, c.messages, c.committed, c.ok); got != c.want {
			t.Errorf("Lag(%d, %d, %d, %v) = %d, want %d", c.current, c.messages, c.committed, c.ok, got, c.want)
		}
	}
}

func TestRuntimeCollectorsAndHead(t *testing.T) {
	r := New(Options{})
	fams, _ := scrape(t, r)
	if fams["go_goroutines"] == nil {
		t.Error("go runtime families missing")
	}
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/metrics", nil))
	if b, _ := io.ReadAll(rec.Body); len(b) != 0 || rec.Header().Get("Content-Type") != ContentType {
		t.Errorf("HEAD: %d bytes, content type %q", len(b), rec.Header().Get("Content-Type"))
	}
}

// BenchmarkObserve is the per-request cost of the metrics hook.
func BenchmarkObserve(b *testing.B) {
	r := New(Options{NoRuntime: true})
	o := dispatch.Observation{Code: wire.CmdSendMessages, Transport: session.TransportTCP, Duration: 50 * time.Microsecond, RequestBytes: 4096, ReplyBytes: 280}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Observe(o)
		}
	})
}

func TestSetRaftSource(t *testing.T) {
	r := New(Options{NoRuntime: true})
	f := &fakeRaft{s: RaftStatus{Term: 3, CommitIndex: 9, Leader: 1, Self: 1}, ok: true}
	if err := r.SetRaftSource(f); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRaftSource(f); err == nil {
		t.Fatal("second raft source accepted")
	}
	fams, _ := scrape(t, r)
	if got, _ := value(fams, "iggo_raft_commit_index"); got != 9 {
		t.Fatalf("commit index %v", got)
	}
}
