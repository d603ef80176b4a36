package metrics

import "testing"

// TestStorageWriteErrors: both kinds exist from the start and count.
func TestStorageWriteErrors(t *testing.T) {
	r := New(Options{NoRuntime: true})
	r.StorageWriteError("enospc")
	r.StorageWriteError("enospc")
	fams, _ := scrape(t, r)
	for kind, want := range map[string]float64{"eio": 0, "enospc": 2} {
		if got, ok := value(fams, "iggo_storage_write_errors_total", "kind", kind); !ok || got != want {
			t.Errorf("iggo_storage_write_errors_total{kind=%q} = %v (found %v), want %v", kind, got, ok, want)
		}
	}
}
