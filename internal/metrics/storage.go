package metrics

import (
	"time"

	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/prometheus/client_golang/prometheus"
)

// Storage latency buckets in seconds: 1 µs to about 1 s, times 4.
var storageBuckets = prometheus.ExponentialBuckets(1e-6, 4, 11)

// storageMetrics are the partition-log families, fed by storage.Observer.
type storageMetrics struct {
	write   prometheus.Histogram
	sync    prometheus.Histogram
	written prometheus.Counter
}

func newStorageMetrics() *storageMetrics {
	return &storageMetrics{
		write: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "iggo_storage_write_duration_seconds",
			Help:    "Time of one record write to a partition segment log (page cache; durability is iggo_storage_fsync_duration_seconds).",
			Buckets: storageBuckets,
		}),
		sync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "iggo_storage_fsync_duration_seconds",
			Help:    "Time of one partition sync round (index write and fdatasync), for enforce_fsync appends and background flushes.",
			Buckets: storageBuckets,
		}),
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggo_storage_written_bytes_total",
			Help: "Record bytes written to partition segment logs.",
		}),
	}
}

func (m *storageMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.write, m.sync, m.written)
}

var _ storage.Observer = (*Registry)(nil)

// StorageWrite implements storage.Observer.
func (r *Registry) StorageWrite(d time.Duration, bytes int) {
	r.store.write.Observe(d.Seconds())
	r.store.written.Add(float64(bytes))
}

// StorageSync implements storage.Observer.
func (r *Registry) StorageSync(d time.Duration) { r.store.sync.Observe(d.Seconds()) }
