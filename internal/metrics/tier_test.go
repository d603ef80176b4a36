package metrics

import (
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/iggo-dev/iggo/internal/tier"
)

type fakeTier struct {
	mu sync.Mutex
	s  tier.Stats
}

func (f *fakeTier) Stats() tier.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s
}

func (f *fakeTier) set(s tier.Stats) {
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
}

func TestTierFamilies(t *testing.T) {
	r := New(Options{NoRuntime: true})
	if fams, _ := scrape(t, r); fams["iggo_tier_uploaded_segments_total"] != nil {
		t.Fatal("tier families without a tier source")
	}
	bounds := []float64{0.1, 1, 10}
	f := &fakeTier{s: tier.Stats{
		UploadedSegments: 3, UploadedBytes: 3 << 20, DroppedSegments: 2, DroppedBytes: 2 << 20,
		DeletedObjects: 4, Failures: 5, ReadErrors: 6,
		Upload: tier.Latency{Bounds: bounds, Buckets: []uint64{1, 2, 3}, Count: 3, Sum: 2.5},
		Fetch:  tier.Latency{Bounds: bounds, Buckets: []uint64{0, 0, 0}, Count: 1, Sum: 42},
		Cache: tier.CacheStats{Hits: 7, Misses: 8, Fetched: 9, FetchedBytes: 9 << 16, Evicted: 10, EvictedBytes: 10 << 16,
			Failures: 11, Bytes: 12 << 16, Chunks: 12},
		Partitions: tier.Tiers{LocalBytes: 100, RemoteBytes: 200, RemoteOnlyBytes: 150, RemoteSegments: 13,
			RemoteOnlySegments: 14, PendingSegments: 15, PendingBytes: 16},
	}}
	if err := r.SetTierSource(f); err != nil {
		t.Fatal(err)
	}
	if err := r.SetTierSource(f); err == nil {
		t.Fatal("second tier source accepted")
	}
	fams, body := scrape(t, r)
	for _, c := range []struct {
		name string
		typ  dto.MetricType
		want float64
	}{
		{"iggo_tier_uploaded_segments_total", dto.MetricType_COUNTER, 3},
		{"iggo_tier_uploaded_bytes_total", dto.MetricType_COUNTER, 3 << 20},
		{"iggo_tier_local_dropped_segments_total", dto.MetricType_COUNTER, 2},
		{"iggo_tier_local_dropped_bytes_total", dto.MetricType_COUNTER, 2 << 20},
		{"iggo_tier_deleted_objects_total", dto.MetricType_COUNTER, 4},
		{"iggo_tier_failures_total", dto.MetricType_COUNTER, 5},
		{"iggo_tier_remote_read_errors_total", dto.MetricType_COUNTER, 6},
		{"iggo_tier_cache_hits_total", dto.MetricType_COUNTER, 7},
		{"iggo_tier_cache_misses_total", dto.MetricType_COUNTER, 8},
		{"iggo_tier_cache_fetches_total", dto.MetricType_COUNTER, 9},
		{"iggo_tier_cache_fetched_bytes_total", dto.MetricType_COUNTER, 9 << 16},
		{"iggo_tier_cache_evictions_total", dto.MetricType_COUNTER, 10},
		{"iggo_tier_cache_evicted_bytes_total", dto.MetricType_COUNTER, 10 << 16},
		{"iggo_tier_cache_fetch_failures_total", dto.MetricType_COUNTER, 11},
		{"iggo_tier_cache_bytes", dto.MetricType_GAUGE, 12 << 16},
		{"iggo_tier_cache_chunks", dto.MetricType_GAUGE, 12},
		{"iggo_tier_local_bytes", dto.MetricType_GAUGE, 100},
		{"iggo_tier_remote_bytes", dto.MetricType_GAUGE, 200},
		{"iggo_tier_remote_only_bytes", dto.MetricType_GAUGE, 150},
		{"iggo_tier_remote_segments", dto.MetricType_GAUGE, 13},
		{"iggo_tier_remote_only_segments", dto.MetricType_GAUGE, 14},
		{"iggo_tier_pending_segments", dto.MetricType_GAUGE, 15},
		{"iggo_tier_pending_bytes", dto.MetricType_GAUGE, 16},
		{"iggo_tier_upload_duration_seconds", dto.MetricType_HISTOGRAM, 3},
		{"iggo_tier_fetch_duration_seconds", dto.MetricType_HISTOGRAM, 1},
	} {
		fam := fams[c.name]
		if fam == nil || fam.GetType() != c.typ {
			t.Errorf("%s: family %v, want type %v", c.name, fam, c.typ)
			continue
		}
		if got, ok := value(fams, c.name); !ok || got != c.want {
			t.Errorf("%s = %v (%v), want %v", c.name, got, ok, c.want)
		}
	}
	h := fams["iggo_tier_upload_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != 2.5 || len(h.GetBucket()) != len(bounds)+1 { // +Inf parsed as a bucket
		t.Fatalf("upload histogram %v", h)
	}
	for i, b := range h.GetBucket()[:len(bounds)] {
		if b.GetUpperBound() != bounds[i] || b.GetCumulativeCount() != uint64(i+1) {
			t.Errorf("upload bucket %d: %v", i, b)
		}
	}
	if !strings.Contains(body, `iggo_tier_fetch_duration_seconds_bucket{le="+Inf"} 1`) {
		t.Errorf("fetch histogram without its +Inf bucket:\n%s", body)
	}
	// Every scrape reads the source again.
	s := f.Stats()
	s.UploadedSegments, s.Partitions.PendingBytes = 30, 0
	f.set(s)
	fams, _ = scrape(t, r)
	if got, _ := value(fams, "iggo_tier_uploaded_segments_total"); got != 30 {
		t.Errorf("uploaded segments after an upload = %v", got)
	}
	if got, ok := value(fams, "iggo_tier_pending_bytes"); !ok || got != 0 {
		t.Errorf("pending bytes once uploaded = %v (%v)", got, ok)
	}
}
