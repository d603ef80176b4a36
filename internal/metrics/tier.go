package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggo-dev/iggo/internal/tier"
)

// TierSource reports the remote tier of tiered storage
// (iggo_tier_* families); *tier.Manager implements it. Stats is called
// once per scrape.
type TierSource interface {
	Stats() tier.Stats
}

// tierFamily is one counter or gauge of the remote tier and how it is
// read from a snapshot.
type tierFamily struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*tier.Stats) float64
}

type tierCollector struct {
	src           TierSource
	families      []tierFamily
	upload, fetch *prometheus.Desc
}

func newTierCollector(src TierSource) *tierCollector {
	c := &tierCollector{
		src:    src,
		upload: prometheus.NewDesc("iggo_tier_upload_duration_seconds", "Time to upload one sealed segment (index and log) to the bucket and verify it.", nil, nil),
		fetch:  prometheus.NewDesc("iggo_tier_fetch_duration_seconds", "Time of one ranged read of the bucket fetching a chunk of a segment for a remote read.", nil, nil),
	}
	counter := func(name, help string, v func(*tier.Stats) float64) {
		c.families = append(c.families, tierFamily{prometheus.NewDesc(name, help, nil, nil), prometheus.CounterValue, v})
	}
	gauge := func(name, help string, v func(*tier.Stats) float64) {
		c.families = append(c.families, tierFamily{prometheus.NewDesc(name, help, nil, nil), prometheus.GaugeValue, v})
	}
	counter("iggo_tier_uploaded_segments_total", "Sealed segments uploaded to the bucket.",
		func(s *tier.Stats) float64 { return float64(s.UploadedSegments) })
	counter("iggo_tier_uploaded_bytes_total", "Bytes of sealed segments (log and index) uploaded to the bucket.",
		func(s *tier.Stats) float64 { return float64(s.UploadedBytes) })
	counter("iggo_tier_local_dropped_segments_total", "Local copies of uploaded segments dropped from local disk by local retention.",
		func(s *tier.Stats) float64 { return float64(s.DroppedSegments) })
	counter("iggo_tier_local_dropped_bytes_total", "Bytes of the local copies of uploaded segments dropped from local disk.",
		func(s *tier.Stats) float64 { return float64(s.DroppedBytes) })
	counter("iggo_tier_deleted_objects_total", "Objects deleted from the bucket (retention, deleted segments, partitions and topics).",
		func(s *tier.Stats) float64 { return float64(s.DeletedObjects) })
	counter("iggo_tier_failures_total", "Failed background passes of the remote tier (uploads, deletions); each is retried after a backoff.",
		func(s *tier.Stats) float64 { return float64(s.Failures) })
	counter("iggo_tier_remote_read_errors_total", "Reads of data held only in the bucket that failed (the poll was answered with an error).",
		func(s *tier.Stats) float64 { return float64(s.ReadErrors) })
	counter("iggo_tier_cache_hits_total", "Remote reads that found their chunk in the local read cache.",
		func(s *tier.Stats) float64 { return float64(s.Cache.Hits) })
	counter("iggo_tier_cache_misses_total", "Remote reads that did not find their chunk in the local read cache.",
		func(s *tier.Stats) float64 { return float64(s.Cache.Misses) })
	counter("iggo_tier_cache_evictions_total", "Chunks evicted from the read cache to keep it within tiered_storage.cache_size.",
		func(s *tier.Stats) float64 { return float64(s.Cache.Evicted) })
	counter("iggo_tier_cache_evicted_bytes_total", "Bytes of the chunks evicted from the read cache.",
		func(s *tier.Stats) float64 { return float64(s.Cache.EvictedBytes) })
	counter("iggo_tier_cache_fetches_total", "Chunks fetched from the bucket into the read cache (reads and prefetches).",
		func(s *tier.Stats) float64 { return float64(s.Cache.Fetched) })
	counter("iggo_tier_cache_fetched_bytes_total", "Bytes fetched from the bucket into the read cache.",
		func(s *tier.Stats) float64 { return float64(s.Cache.FetchedBytes) })
	counter("iggo_tier_cache_fetch_failures_total", "Chunk fetches that failed (the bucket, the verification or the local disk).",
		func(s *tier.Stats) float64 { return float64(s.Cache.Failures) })
	gauge("iggo_tier_cache_bytes", "Bytes of the chunks held in the read cache.",
		func(s *tier.Stats) float64 { return float64(s.Cache.Bytes) })
	gauge("iggo_tier_cache_chunks", "Chunks held in the read cache.",
		func(s *tier.Stats) float64 { return float64(s.Cache.Chunks) })
	gauge("iggo_tier_pending_segments", "Sealed local segments not uploaded yet, in every partition held here.",
		func(s *tier.Stats) float64 { return float64(s.Partitions.PendingSegments) })
	gauge("iggo_tier_pending_bytes", "Bytes of the sealed local segments not uploaded yet.",
		func(s *tier.Stats) float64 { return float64(s.Partitions.PendingBytes) })
	gauge("iggo_tier_local_bytes", "Bytes of the partitions' segments on local disk (active segments included).",
		func(s *tier.Stats) float64 { return float64(s.Partitions.LocalBytes) })
	gauge("iggo_tier_remote_bytes", "Bytes of the segments in the bucket, whether or not a local copy remains.",
		func(s *tier.Stats) float64 { return float64(s.Partitions.RemoteBytes) })
	gauge("iggo_tier_remote_only_bytes", "Bytes of the segments held only in the bucket (no local copy).",
		func(s *tier.Stats) float64 { return float64(s.Partitions.RemoteOnlyBytes) })
	gauge("iggo_tier_remote_segments", "Segments in the bucket, whether or not a local copy remains.",
		func(s *tier.Stats) float64 { return float64(s.Partitions.RemoteSegments) })
	gauge("iggo_tier_remote_only_segments", "Segments held only in the bucket (no local copy).",
		func(s *tier.Stats) float64 { return float64(s.Partitions.RemoteOnlySegments) })
	return c
}

// Describe implements prometheus.Collector.
func (c *tierCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.desc
	}
	ch <- c.upload
	ch <- c.fetch
}

// Collect implements prometheus.Collector.
func (c *tierCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	for _, f := range c.families {
		ch <- prometheus.MustNewConstMetric(f.desc, f.kind, f.value(&s))
	}
	ch <- latencyHistogram(c.upload, s.Upload)
	ch <- latencyHistogram(c.fetch, s.Fetch)
}

// latencyHistogram is a histogram of desc from a snapshot with
// cumulative buckets.
func latencyHistogram(desc *prometheus.Desc, l tier.Latency) prometheus.Metric {
	buckets := make(map[float64]uint64, len(l.Bounds))
	for i, b := range l.Bounds {
		if i < len(l.Buckets) {
			buckets[b] = l.Buckets[i]
		}
	}
	return prometheus.MustNewConstHistogram(desc, l.Count, l.Sum, buckets)
}

// SetTierSource adds the remote tier families for src (tiered storage
// on). It may be called once.
func (r *Registry) SetTierSource(src TierSource) error {
	if err := r.reg.Register(newTierCollector(src)); err != nil {
		return fmt.Errorf("metrics: tier source already registered: %w", err)
	}
	return nil
}
