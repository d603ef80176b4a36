package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// RaftStatus is a replica's consensus state at scrape time.
type RaftStatus struct {
	// Term is the current term; CommitIndex the highest committed log
	// index; Leader the leader's replica id (0 when unknown); Self this
	// replica's id.
	Term, CommitIndex, Leader, Self uint64
}

// RaftSource is implemented by the replication layer in cluster mode (not
// wired in a single-node server; give it with Options.Raft or
// Registry.SetRaftSource): Registry reports its status as
// iggo_raft_term, iggo_raft_commit_index, iggo_raft_leader_id and
// iggo_raft_is_leader. ok false (no consensus running yet) omits them.
type RaftSource interface {
	RaftStatus() (s RaftStatus, ok bool)
}

type raftCollector struct {
	src                      RaftSource
	term, commit, leader, is *prometheus.Desc
}

func newRaftCollector(src RaftSource) *raftCollector {
	return &raftCollector{
		src:    src,
		term:   prometheus.NewDesc("iggo_raft_term", "Current raft term of this replica.", nil, nil),
		commit: prometheus.NewDesc("iggo_raft_commit_index", "Highest committed raft log index known to this replica.", nil, nil),
		leader: prometheus.NewDesc("iggo_raft_leader_id", "Replica id of the current leader (0 when unknown).", nil, nil),
		is:     prometheus.NewDesc("iggo_raft_is_leader", "1 when this replica is the leader, else 0.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.term
	ch <- c.commit
	ch <- c.leader
	ch <- c.is
}

// Collect implements prometheus.Collector.
func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.src.RaftStatus()
	if !ok {
		return
	}
	is := 0.0
	if s.Leader != 0 && s.Leader == s.Self {
		is = 1
	}
	ch <- prometheus.MustNewConstMetric(c.term, prometheus.GaugeValue, float64(s.Term))
	ch <- prometheus.MustNewConstMetric(c.commit, prometheus.GaugeValue, float64(s.CommitIndex))
	ch <- prometheus.MustNewConstMetric(c.leader, prometheus.GaugeValue, float64(s.Leader))
	ch <- prometheus.MustNewConstMetric(c.is, prometheus.GaugeValue, is)
}

// SetRaftSource adds the cluster families for src to a Registry built
// without Options.Raft (the replication layer starts after the registry
// exists). It may be called once; a second call, or one after
// Options.Raft was set, returns an error.
func (r *Registry) SetRaftSource(src RaftSource) error {
	if err := r.reg.Register(newRaftCollector(src)); err != nil {
		return fmt.Errorf("metrics: raft source already registered: %w", err)
	}
	return nil
}
