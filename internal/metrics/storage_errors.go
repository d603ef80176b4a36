package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggo-dev/iggo/internal/storage"
)

// newWriteErrors is iggo_storage_write_errors_total: write and sync errors
// the OS returned to partition logs, by kind ("eio": the partition
// stopped; "enospc": the write was refused for lack of space).
func newWriteErrors() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "iggo_storage_write_errors_total",
		Help: "Write and sync errors of partition logs: kind=\"eio\" stopped the partition (until restart), kind=\"enospc\" refused a write for lack of space.",
	}, []string{"kind"})
	// Both series exist from the start, so alerts can use rate().
	c.WithLabelValues("eio")
	c.WithLabelValues("enospc")
	return c
}

var _ storage.WriteErrorObserver = (*Registry)(nil)

// StorageWriteError implements storage.WriteErrorObserver.
func (r *Registry) StorageWriteError(kind string) { r.writeErrors.WithLabelValues(kind).Inc() }
