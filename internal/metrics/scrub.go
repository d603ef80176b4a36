package metrics

import "github.com/prometheus/client_golang/prometheus"

// Damage sources of iggo_storage_damage_found_total.
const (
	// DamageSourceOpen is damage quarantined when a partition opened.
	DamageSourceOpen = "open"
	// DamageSourceScrub is damage found by the background scrubber or
	// a VERIFY_PARTITION.
	DamageSourceScrub = "scrub"
	// DamageSourceRead is damage found while serving a read.
	DamageSourceRead = "read"
)

// scrubMetrics are the families of damage detection and the scrubber.
type scrubMetrics struct {
	found  *prometheus.CounterVec
	bytes  prometheus.Counter
	passes prometheus.Counter
}

func newScrubMetrics() *scrubMetrics {
	m := &scrubMetrics{
		found: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggo_storage_damage_found_total",
			Help: "Damaged record ranges found in partition logs and quarantined, by where they were found (open, scrub, read).",
		}, []string{"source"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggo_storage_scrub_bytes_total",
			Help: "Bytes of sealed segments read and verified by the scrubber and by VERIFY_PARTITION.",
		}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggo_storage_scrub_passes_total",
			Help: "Full passes of the background scrubber over every partition of this node.",
		}),
	}
	// Every source is exported from the start, so a rate over it exists
	// before the first damage.
	for _, s := range []string{DamageSourceOpen, DamageSourceScrub, DamageSourceRead} {
		m.found.WithLabelValues(s)
	}
	return m
}

func (m *scrubMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.found, m.bytes, m.passes)
}

// DamageFound counts n damaged ranges newly found by source (one of the
// DamageSource constants).
func (r *Registry) DamageFound(source string, n int) {
	if n > 0 {
		r.scrub.found.WithLabelValues(source).Add(float64(n))
	}
}

// ScrubRead counts bytes a scrub read and verified.
func (r *Registry) ScrubRead(bytes int64) {
	if bytes > 0 {
		r.scrub.bytes.Add(float64(bytes))
	}
}

// ScrubPass counts one full pass of the background scrubber.
func (r *Registry) ScrubPass() { r.scrub.passes.Inc() }
