package metrics

import "testing"

// counterValue is the value of counter family name with label method=m
// (or the family's only series when m is empty), and whether it exists.
func counterValue(t *testing.T, r *Registry, name, m string) (float64, bool) {
	t.Helper()
	mfs, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			if m == "" {
				return s.GetCounter().GetValue(), true
			}
			for _, l := range s.GetLabel() {
				if l.GetName() == "method" && l.GetValue() == m {
					return s.GetCounter().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

func TestRebuildCounters(t *testing.T) {
	r := New(Options{NoRuntime: true})
	if v, ok := counterValue(t, r, "iggo_storage_repaired_total", "rebuild"); !ok || v != 0 {
		t.Fatalf("repaired{method=rebuild} before any rebuild: %v (present %v), want an exported 0", v, ok)
	}
	r.ReplicaDamaged()
	r.ReplicaDamaged()
	r.ReplicaRebuilt()
	if v, _ := counterValue(t, r, "iggo_cluster_replica_rebuilds_started_total", ""); v != 2 {
		t.Fatalf("rebuilds started %v, want 2", v)
	}
	if v, _ := counterValue(t, r, "iggo_storage_repaired_total", "rebuild"); v != 1 {
		t.Fatalf("repaired{method=rebuild} %v, want 1", v)
	}
}
