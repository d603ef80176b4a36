package metrics

import "testing"

type fakeCluster struct {
	s  ClusterStatus
	ok bool
}

func (f *fakeCluster) ClusterStatus() (ClusterStatus, bool) { return f.s, f.ok }

func TestClusterFamilies(t *testing.T) {
	r := New(Options{NoRuntime: true})
	f := &fakeCluster{s: ClusterStatus{MovesInProgress: 2, Replicas: map[uint8]int{0: 5, 3: 1},
		Leaders: map[uint8]int{0: 4}, UnderReplicated: 1}, ok: true}
	if err := r.SetClusterSource(f); err != nil {
		t.Fatal(err)
	}
	if err := r.SetClusterSource(f); err == nil {
		t.Fatal("second cluster source accepted")
	}
	fams, _ := scrape(t, r)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"iggo_cluster_moves_in_progress", nil, 2},
		{"iggo_cluster_replicas", []string{"replica_id", "0"}, 5},
		{"iggo_cluster_replicas", []string{"replica_id", "3"}, 1},
		{"iggo_cluster_partition_leaders", []string{"replica_id", "0", "scope", "partial"}, 4},
		{"iggo_cluster_under_replicated_partitions", nil, 1},
	} {
		if got, ok := value(fams, c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%v = %v (%v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// Unknown under-replication is left out; no status leaves out all.
	f.s.UnderReplicated = -1
	if fams, _ = scrape(t, r); fams["iggo_cluster_under_replicated_partitions"] != nil {
		t.Error("unknown under-replication reported")
	}
	f.ok = false
	if fams, _ = scrape(t, r); fams["iggo_cluster_moves_in_progress"] != nil {
		t.Error("families reported without a status")
	}
}
