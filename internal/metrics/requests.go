package metrics

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// Transport label values, by slot (transportSlot).
var transportNames = [...]string{"other", "tcp", "quic", "websocket", "http"}

// numTransports is the number of transport slots.
const numTransports = len(transportNames)

// TransportName is the `transport` label value of a session transport:
// tcp (also TLS), quic, websocket (also WSS), http (HTTP API requests the
// dispatcher serves on trusted sessions), or other.
func TransportName(t session.Transport) string { return transportNames[transportSlot(t)] }

func transportSlot(t session.Transport) int {
	switch t {
	case session.TransportTCP:
		return 1
	case session.TransportQUIC:
		return 2
	case session.TransportWebSocket:
		return 3
	case session.TransportHTTP:
		return 4
	}
	return 0
}

// maxCommand is the highest command code with its own series; higher
// codes share the "unknown" slot maxCommand+1.
const maxCommand = 1023

// Request-latency buckets in seconds: 10 µs to about 2.6 s, times 4.
var requestBuckets = prometheus.ExponentialBuckets(10e-6, 4, 10)

// statusEviction is the `status` label of an Eviction answer.
const statusEviction = "eviction"

// requestMetrics are the binary-protocol request families. Series are
// resolved once per (command, transport) and (status, transport) and kept
// in fixed arrays of atomic pointers, so Observe never allocates or locks
// after the first request of a kind.
type requestMetrics struct {
	duration  *prometheus.HistogramVec
	responses *prometheus.CounterVec
	recvBytes *prometheus.CounterVec
	sentBytes *prometheus.CounterVec

	recv, sent [numTransports]prometheus.Counter
	commands   [maxCommand + 2]string // label values, "" for unknown codes
	hist       [maxCommand + 2][numTransports]atomic.Pointer[histSlot]
	// statusIdx maps a status code to its slot (read only after
	// construction); slot 0 is "0" (success), the last is eviction, and
	// codes outside the error table share the "other" slot.
	statusIdx   map[uint32]int
	statusNames []string
	status      [][numTransports]atomic.Pointer[counterSlot]
}

type histSlot struct{ h prometheus.Observer }

type counterSlot struct{ c prometheus.Counter }

// maxStatusCode bounds the IggyError codes looked up for status slots.
const maxStatusCode = 1 << 16

func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "iggo_request_duration_seconds",
			Help:    "Time to decide the answer to a binary-protocol request, by command and transport (the reply write is not included).",
			Buckets: requestBuckets,
		}, []string{"command", "transport"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggo_responses_total",
			Help: "Binary-protocol answers by reply status (0 success, an IggyError code for a denial, eviction) and transport.",
		}, []string{"status", "transport"}),
		recvBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggo_transport_received_bytes_total",
			Help: "Request frame bytes (headers included) read by the binary transports.",
		}, []string{"transport"}),
		sentBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggo_transport_sent_bytes_total",
			Help: "Answer frame bytes (headers and poll payloads included) produced for the binary transports.",
		}, []string{"transport"}),
		statusIdx: map[uint32]int{0: 0},
	}
	for i, name := range transportNames {
		m.recv[i] = m.recvBytes.WithLabelValues(name)
		m.sent[i] = m.sentBytes.WithLabelValues(name)
	}
	m.commands[maxCommand+1] = "unknown"
	for _, c := range wire.Commands() {
		if c.Code <= maxCommand {
			m.commands[c.Code] = strings.ToLower(c.Name)
		}
	}
	m.statusNames = append(m.statusNames, "0")
	for code := uint32(1); code < maxStatusCode; code++ {
		if wire.KnownCode(code) {
			m.statusIdx[code] = len(m.statusNames)
			m.statusNames = append(m.statusNames, strconv.FormatUint(uint64(code), 10))
		}
	}
	m.statusNames = append(m.statusNames, "other", statusEviction)
	m.status = make([][numTransports]atomic.Pointer[counterSlot], len(m.statusNames))
	return m
}

func (m *requestMetrics) register(r *prometheus.Registry) {
	r.MustRegister(m.duration, m.responses, m.recvBytes, m.sentBytes)
}

// commandSlot returns the slot and label of a command code.
func (m *requestMetrics) commandSlot(code wire.Command) (int, string) {
	i := int(code)
	if code > maxCommand || m.commands[i] == "" {
		i = maxCommand + 1
	}
	return i, m.commands[i]
}

// statusSlot returns the slot of an answer.
func (m *requestMetrics) statusSlot(status uint32, evicted bool) int {
	if evicted {
		return len(m.statusNames) - 1
	}
	if i, ok := m.statusIdx[status]; ok {
		return i
	}
	return len(m.statusNames) - 2
}

func (m *requestMetrics) observe(o *dispatch.Observation) {
	t := transportSlot(o.Transport)
	ci, cname := m.commandSlot(o.Code)
	hs := m.hist[ci][t].Load()
	if hs == nil {
		hs = &histSlot{h: m.duration.WithLabelValues(cname, transportNames[t])}
		m.hist[ci][t].Store(hs)
	}
	hs.h.Observe(o.Duration.Seconds())
	si := m.statusSlot(o.Status, o.Evicted)
	cs := m.status[si][t].Load()
	if cs == nil {
		cs = &counterSlot{c: m.responses.WithLabelValues(m.statusNames[si], transportNames[t])}
		m.status[si][t].Store(cs)
	}
	cs.c.Inc()
	m.recv[t].Add(float64(o.RequestBytes))
	m.sent[t].Add(float64(o.ReplyBytes))
}

// Observe implements dispatch.Observer: it counts one binary-protocol
// request. After the first request of a (command, transport) and (status,
// transport) pair it allocates nothing.
func (r *Registry) Observe(o dispatch.Observation) { r.req.observe(&o) }
