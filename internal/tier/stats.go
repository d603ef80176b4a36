package tier

import (
	"sync/atomic"
	"time"
)

// latencyBuckets are the upper bounds (seconds) of the latency histograms.
var latencyBuckets = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// histogram counts durations into latencyBuckets.
type histogram struct {
	counts [len(latencyBuckets) + 1]atomic.Uint64
	sumNs  atomic.Uint64
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(latencyBuckets) && s > latencyBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(uint64(max(d, 0)))
}

// Latency is a histogram snapshot: Buckets are cumulative counts at or
// below each of Bounds (seconds), Count and Sum (seconds) cover all.
type Latency struct {
	Bounds  []float64
	Buckets []uint64
	Count   uint64
	Sum     float64
}

func (h *histogram) snapshot() Latency {
	l := Latency{Bounds: latencyBuckets[:], Buckets: make([]uint64, len(latencyBuckets))}
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		if i < len(latencyBuckets) {
			l.Buckets[i] = cum
		}
	}
	l.Count = cum
	l.Sum = float64(h.sumNs.Load()) / 1e9
	return l
}

// metrics are the manager's counters.
type metrics struct {
	uploadedSegments, uploadedBytes atomic.Uint64
	droppedSegments, droppedBytes   atomic.Uint64
	deletedObjects                  atomic.Uint64
	fetchedBytes                    atomic.Uint64
	failures                        atomic.Uint64
	readErrors                      atomic.Uint64
	uploadSeconds, fetchSeconds     histogram
}

// Stats are the remote tier's counters and gauges, for /metrics.
type Stats struct {
	// UploadedSegments and UploadedBytes count uploads since start.
	UploadedSegments, UploadedBytes uint64
	// DroppedSegments and DroppedBytes count local copies dropped.
	DroppedSegments, DroppedBytes uint64
	// DeletedObjects counts objects deleted from the bucket.
	DeletedObjects uint64
	// Failures counts failed background passes and deletions (uploads,
	// deletes); ReadErrors failed remote reads.
	Failures, ReadErrors uint64
	// Upload and Fetch are the latencies of a segment upload and of a
	// remote read fetching a chunk.
	Upload, Fetch Latency
	// Cache holds the read cache's counters.
	Cache CacheStats
	// Partitions sums the tiers of the open partitions.
	Partitions Tiers
}

// Stats returns a snapshot of the counters, with the tiers of every open
// partition summed.
func (m *Manager) Stats() Stats {
	s := Stats{
		UploadedSegments: m.met.uploadedSegments.Load(), UploadedBytes: m.met.uploadedBytes.Load(),
		DroppedSegments: m.met.droppedSegments.Load(), DroppedBytes: m.met.droppedBytes.Load(),
		DeletedObjects: m.met.deletedObjects.Load(),
		Failures:       m.met.failures.Load(), ReadErrors: m.met.readErrors.Load(),
		Upload: m.met.uploadSeconds.snapshot(), Fetch: m.met.fetchSeconds.snapshot(),
		Cache: m.cache.Stats(),
	}
	m.mu.Lock()
	parts := make([]*Partition, 0, len(m.parts))
	for p := range m.parts {
		parts = append(parts, p)
	}
	m.mu.Unlock()
	for _, p := range parts {
		_, t := p.Stats()
		s.Partitions.LocalBytes += t.LocalBytes
		s.Partitions.RemoteBytes += t.RemoteBytes
		s.Partitions.RemoteOnlyBytes += t.RemoteOnlyBytes
		s.Partitions.RemoteSegments += t.RemoteSegments
		s.Partitions.RemoteOnlySegments += t.RemoteOnlySegments
		s.Partitions.PendingSegments += t.PendingSegments
		s.Partitions.PendingBytes += t.PendingBytes
	}
	return s
}
