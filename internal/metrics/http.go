package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the HTTP API families: the reference's unlabelled
// http_requests_total and a latency histogram per route, method and
// status class.
type httpMetrics struct {
	requests prometheus.Counter
	duration *prometheus.HistogramVec

	mu     sync.RWMutex
	series map[httpKey]prometheus.Observer // guarded by mu
}

type httpKey struct {
	route, method string
	status        int
}

func newHTTPMetrics() *httpMetrics {
	return &httpMetrics{
		requests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "total count of http_requests.",
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "iggo_http_request_duration_seconds",
			Help:    "HTTP API request latency by route pattern, method and status code.",
			Buckets: requestBuckets,
		}, []string{"route", "method", "status"}),
		series: map[httpKey]prometheus.Observer{},
	}
}

func (m *httpMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.requests, m.duration)
}

// ObserveHTTP counts one HTTP API request: http_requests_total (every
// request, CORS preflights included, as the reference counts them) and
// its latency under the route pattern (not the raw path, so ids do not
// multiply series), method and status. It matches httpapi.Options.Observe.
func (r *Registry) ObserveHTTP(route, method string, status int, d time.Duration) {
	m := r.http
	m.requests.Inc()
	k := httpKey{route: route, method: method, status: status}
	m.mu.RLock()
	o, ok := m.series[k]
	m.mu.RUnlock()
	if !ok {
		o = m.duration.WithLabelValues(route, method, strconv.Itoa(status))
		m.mu.Lock()
		m.series[k] = o
		m.mu.Unlock()
	}
	o.Observe(d.Seconds())
}
