package metrics

import "github.com/prometheus/client_golang/prometheus"

// rebuildMetrics count the damaged partition replicas of a cluster node
// rebuilt from their peers (internal/partition rebuild.go).
type rebuildMetrics struct {
	// repaired is iggo_storage_repaired_total; this node feeds its
	// method="rebuild" series.
	repaired *prometheus.CounterVec
	started  prometheus.Counter
}

func newRebuildMetrics() *rebuildMetrics {
	m := &rebuildMetrics{
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggo_storage_repaired_total",
			Help: "Damaged partition data repaired, by method: record (one record fetched from a peer) or rebuild (a cluster replica wiped and caught up from its peers).",
		}, []string{"method"}),
		started: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggo_cluster_replica_rebuilds_started_total",
			Help: "Partition replicas of this node found damaged and taken out of their raft group to be rebuilt from their peers.",
		}),
	}
	m.repaired.WithLabelValues("rebuild")
	return m
}

func (m *rebuildMetrics) register(r *prometheus.Registry) { r.MustRegister(m.repaired, m.started) }

// ReplicaDamaged counts a rebuild started (partition.RebuildObserver).
func (r *Registry) ReplicaDamaged() { r.rebuild.started.Inc() }

// ReplicaRebuilt counts a replica rebuilt from its peers
// (partition.RebuildObserver): iggo_storage_repaired_total{method="rebuild"}.
func (r *Registry) ReplicaRebuilt() { r.rebuild.repaired.WithLabelValues("rebuild").Inc() }
