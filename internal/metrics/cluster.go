package metrics

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// ClusterStatus is the partition placement of a cluster at scrape time,
// as one node sees it.
type ClusterStatus struct {
	// MovesInProgress is the number of partitions with a replica move in
	// progress (cluster-wide, from the metadata placement).
	MovesInProgress int
	// Replicas is, per replica id, the number of partitions the node
	// holds a replica of (cluster-wide, from the metadata placement;
	// during a move both the giving and the taking node count).
	Replicas map[uint8]int
	// Leaders is, per replica id, the number of placed partitions the
	// node leads; nil when unknown. LeadersComplete is false when the
	// leader of some partition is not known.
	Leaders         map[uint8]int
	LeadersComplete bool
	// UnderReplicated is the number of placed partitions fewer of whose
	// replicas are caught up with their leader than the replica list
	// holds, or whose leader is not known; -1 when unknown.
	UnderReplicated int
}

// ClusterSource reports the placement families
// (iggo_cluster_moves_in_progress, iggo_cluster_replicas,
// iggo_cluster_partition_leaders, iggo_cluster_under_replicated_partitions);
// a cluster node implements it. ok false (no metadata yet) omits them.
type ClusterSource interface {
	ClusterStatus() (s ClusterStatus, ok bool)
}

type clusterCollector struct {
	src                                 ClusterSource
	moves, replicas, leaders, underRepl *prometheus.Desc
}

func newClusterCollector(src ClusterSource) *clusterCollector {
	node := []string{"replica_id"}
	return &clusterCollector{
		src:      src,
		moves:    prometheus.NewDesc("iggo_cluster_moves_in_progress", "Partitions with a replica move in progress, cluster-wide.", nil, nil),
		replicas: prometheus.NewDesc("iggo_cluster_replicas", "Partitions each node holds a replica of, from the metadata placement (both sides of a move in progress count).", node, nil),
		leaders: prometheus.NewDesc("iggo_cluster_partition_leaders", "Partitions each node leads, from the leader directory; scope is \"cluster\" when every partition's leader is known, \"partial\" otherwise.",
			[]string{"replica_id", "scope"}, nil),
		underRepl: prometheus.NewDesc("iggo_cluster_under_replicated_partitions", "Partitions with fewer replicas caught up with their leader than their replica list holds, or without a known leader, cluster-wide.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.moves
	ch <- c.replicas
	ch <- c.leaders
	ch <- c.underRepl
}

// Collect implements prometheus.Collector.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.src.ClusterStatus()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.moves, prometheus.GaugeValue, float64(s.MovesInProgress))
	for id, n := range s.Replicas {
		ch <- prometheus.MustNewConstMetric(c.replicas, prometheus.GaugeValue, float64(n), strconv.Itoa(int(id)))
	}
	scope := "partial"
	if s.LeadersComplete {
		scope = "cluster"
	}
	for id, n := range s.Leaders {
		ch <- prometheus.MustNewConstMetric(c.leaders, prometheus.GaugeValue, float64(n), strconv.Itoa(int(id)), scope)
	}
	if s.UnderReplicated >= 0 {
		ch <- prometheus.MustNewConstMetric(c.underRepl, prometheus.GaugeValue, float64(s.UnderReplicated))
	}
}

// SetClusterSource adds the placement families for src (cluster mode).
// It may be called once.
func (r *Registry) SetClusterSource(src ClusterSource) error {
	if err := r.reg.Register(newClusterCollector(src)); err != nil {
		return fmt.Errorf("metrics: cluster source already registered: %w", err)
	}
	return nil
}
