package metrics

import "testing"

func TestScrubFamilies(t *testing.T) {
	r := New(Options{NoRuntime: true})
	fams, _ := scrape(t, r)
	for _, s := range []string{DamageSourceOpen, DamageSourceScrub, DamageSourceRead} {
		if v, ok := value(fams, "iggo_storage_damage_found_total", "source", s); !ok || v != 0 {
			t.Fatalf("source %s before any damage: %v %v", s, v, ok)
		}
	}
	r.DamageFound(DamageSourceScrub, 2)
	r.DamageFound(DamageSourceScrub, 0)
	r.DamageFound(DamageSourceOpen, 1)
	r.ScrubRead(4096)
	r.ScrubRead(-1)
	r.ScrubPass()
	fams, _ = scrape(t, r)
	for _, tc := range []struct {
		name  string
		label []string
		want  float64
	}{
		{"iggo_storage_damage_found_total", []string{"source", "scrub"}, 2},
		{"iggo_storage_damage_found_total", []string{"source", "open"}, 1},
		{"iggo_storage_damage_found_total", []string{"source", "read"}, 0},
		{"iggo_storage_scrub_bytes_total", nil, 4096},
		{"iggo_storage_scrub_passes_total", nil, 1},
	} {
		if v, ok := value(fams, tc.name, tc.label...); !ok || v != tc.want {
			t.Errorf("%s %v = %v (%v), want %v", tc.name, tc.label, v, ok, tc.want)
		}
	}
}
