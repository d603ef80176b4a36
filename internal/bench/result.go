package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ResultVersion is the schema version of the result file.
const ResultVersion = 1

// MB is the megabyte of every MB/s figure: 10^6 bytes, as iggy-bench.
const MB = 1e6

// ActorKind is what an actor does.
type ActorKind string

// Actor kinds.
const (
	KindProducer          ActorKind = "producer"
	KindConsumer          ActorKind = "consumer"
	KindProducingConsumer ActorKind = "producing-consumer"
)

// Result is the result file: everything needed to compare two runs.
type Result struct {
	Version   int       `json:"version"`
	Name      string    `json:"name"`
	Scenario  Scenario  `json:"scenario"`
	StartedAt time.Time `json:"started_at"`
	Params    Params    `json:"params"`
	Env       Env       `json:"environment"`
	// Baseline is the loopback TCP throughput measured just before the
	// benchmark (nil when skipped).
	Baseline *Baseline `json:"baseline,omitempty"`
	// Disk is the write-and-fdatasync baseline measured just before the
	// benchmark (nil when skipped).
	Disk *DiskBaseline `json:"disk_baseline,omitempty"`
	// Cache is the write-without-sync baseline measured just before the
	// benchmark, in the same directory (nil when skipped).
	Cache *DiskBaseline `json:"cache_baseline,omitempty"`
	// Process identifies the broker's process when it runs on this
	// machine; CPU is the CPU time of the measured phase.
	Process *ProcessInfo `json:"process,omitempty"`
	CPU     *CPUUse      `json:"cpu,omitempty"`
	// Resources samples the broker's process over the measured phase.
	Resources []ResourceSample `json:"resources,omitempty"`
	// Fill is the unmeasured preparation of the consume-only scenarios.
	Fill *Fill `json:"fill,omitempty"`
	// Seconds is the measured phase, from the end of the warmup to the
	// last actor finishing.
	Seconds float64 `json:"seconds"`
	Actors  []Actor `json:"actors"`
	// Groups sums the actors of each kind.
	Groups []Group `json:"groups"`
	Check  Check   `json:"check"`
}

// Params are the effective parameters of the run.
type Params struct {
	Producers        int     `json:"producers"`
	Consumers        int     `json:"consumers"`
	Streams          int     `json:"streams"`
	Partitions       int     `json:"partitions"`
	MessageSize      int     `json:"message_size"`
	MessagesPerBatch int     `json:"messages_per_batch"`
	MessageBatches   uint64  `json:"message_batches,omitempty"`
	DurationSeconds  float64 `json:"duration_seconds,omitempty"`
	RateLimit        uint64  `json:"rate_limit_bytes_per_second,omitempty"`
	WarmupSeconds    float64 `json:"warmup_seconds"`
	EnforceFsync     bool    `json:"enforce_fsync"`
	SegmentSize      uint64  `json:"segment_size,omitempty"`
	MaxTopicSize     uint64  `json:"max_topic_size,omitempty"`
	SamplingMillis   float64 `json:"sampling_ms"`
	Server           string  `json:"server"`
	Transport        string  `json:"transport"`
	TLS              bool    `json:"tls"`
}

// Env describes the machine the run was made on.
type Env struct {
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	// LoadBefore and LoadAfter are the 1-minute load averages around the
	// run (Linux), a hint that other processes competed for the CPUs.
	LoadBefore float64 `json:"load_before,omitempty"`
	LoadAfter  float64 `json:"load_after,omitempty"`
	Version    string  `json:"iggo_version,omitempty"`
}

// Baseline is a plain loopback TCP copy between two goroutines.
type Baseline struct {
	Seconds    float64 `json:"seconds"`
	Bytes      uint64  `json:"bytes"`
	BufferSize int     `json:"buffer_size"`
	MBps       float64 `json:"mb_per_second"`
}

// Fill is the preparation phase of a consume-only scenario.
type Fill struct {
	Messages uint64  `json:"messages"`
	Bytes    uint64  `json:"payload_bytes"`
	Seconds  float64 `json:"seconds"`
}

// Actor is one producer or consumer (one connection).
type Actor struct {
	Kind ActorKind `json:"kind"`
	// ID numbers the actors of a kind from 1.
	ID     int    `json:"id"`
	Stream string `json:"stream"`
	// Partition is the pinned partition; nil when the server chooses
	// (balanced producers, group consumers).
	Partition *uint32 `json:"partition,omitempty"`
	Group     string  `json:"consumer_group,omitempty"`

	// Measured counts (after the warmup).
	Messages     uint64 `json:"messages"`
	Batches      uint64 `json:"batches"`
	PayloadBytes uint64 `json:"payload_bytes"`
	// WireBytes counts the batch bytes as encoded: 256-byte batch headers
	// and 64-byte message headers included.
	WireBytes uint64 `json:"wire_bytes"`
	// TotalMessages counts every message sent or received, warmup
	// included (for Check).
	TotalMessages uint64 `json:"total_messages"`
	// Seconds runs from the actor's first measured batch to its last.
	Seconds   float64    `json:"seconds"`
	MBps      float64    `json:"mb_per_second"`
	WireMBps  float64    `json:"wire_mb_per_second"`
	MsgsPerS  float64    `json:"messages_per_second"`
	Latency   Summary    `json:"latency"`
	Age       *Summary   `json:"message_age,omitempty"`
	Series    Series     `json:"series"`
	Histogram *Histogram `json:"latency_histogram"`
	// AgeHistogram is the message age at receipt (consumers running next
	// to producers, producing consumers).
	AgeHistogram *Histogram `json:"message_age_histogram,omitempty"`
}

// Group sums the actors of one kind.
type Group struct {
	Kind         ActorKind `json:"kind"`
	Actors       int       `json:"actors"`
	Messages     uint64    `json:"messages"`
	Batches      uint64    `json:"batches"`
	PayloadBytes uint64    `json:"payload_bytes"`
	WireBytes    uint64    `json:"wire_bytes"`
	// Seconds is the span from the first actor's first measured batch to
	// the last actor's last.
	Seconds  float64 `json:"seconds"`
	MBps     float64 `json:"mb_per_second"`
	WireMBps float64 `json:"wire_mb_per_second"`
	MsgsPerS float64 `json:"messages_per_second"`
	// Latency is over every batch of every actor of the kind (merged
	// histograms).
	Latency Summary  `json:"latency"`
	Age     *Summary `json:"message_age,omitempty"`
	// Series is the group's throughput over time (sum of the actors').
	Series Series `json:"series"`
}

// Summary is a latency distribution in milliseconds.
type Summary struct {
	Count uint64  `json:"count"`
	Min   float64 `json:"min_ms"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Summarize computes the Summary of h.
func Summarize(h *Histogram) Summary {
	return Summary{
		Count: h.Count(), Min: ms(h.Min()), Mean: ms(h.Mean()),
		P50: ms(h.Percentile(50)), P90: ms(h.Percentile(90)), P95: ms(h.Percentile(95)),
		P99: ms(h.Percentile(99)), P999: ms(h.Percentile(99.9)), Max: ms(h.Max()),
	}
}

// Series is a throughput time series: point i covers the interval ending
// (i+1) × IntervalMillis after the warmup (the last one may be shorter;
// rates are per its real length).
type Series struct {
	IntervalMillis float64   `json:"interval_ms"`
	MBps           []float64 `json:"mb_per_second"`
	MsgsPerS       []float64 `json:"messages_per_second"`
}

// Check is the accounting of the run: what producers had confirmed (or
// the fill stored), what the server reports it holds, and what consumers
// read.
type Check struct {
	Sent     uint64 `json:"sent"`
	Stored   uint64 `json:"stored"`
	Received uint64 `json:"received"`
	// Exact is set when Received must equal Sent: every scenario that
	// consumes, except pinned-consumer under --duration (it re-reads).
	Exact bool `json:"exact"`
	// Retention is set when the topics have a size limit: the server may
	// then hold fewer messages than were confirmed.
	Retention bool `json:"retention,omitempty"`
	OK        bool `json:"ok"`
}

// evaluate sets OK: the server stores what was confirmed, and consumers
// read exactly that when Exact.
func (c *Check) evaluate(consumes bool) {
	stored := c.Stored == c.Sent || c.Retention && c.Stored <= c.Sent
	c.OK = stored && (!consumes || !c.Exact || c.Received == c.Sent)
}

// String explains the check in one line.
func (c Check) String() string {
	verdict := "ok"
	if !c.OK {
		verdict = "MISMATCH"
	}
	return fmt.Sprintf("sent %d, stored %d, received %d: %s", c.Sent, c.Stored, c.Received, verdict)
}

// WriteFiles writes dir/name.json and dir/name.html.
func (r *Result) WriteFiles(dir string) (jsonPath, htmlPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create output directory: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("encode result: %w", err)
	}
	jsonPath = filepath.Join(dir, r.Name+".json")
	if err := os.WriteFile(jsonPath, append(data, '\n'), 0o644); err != nil {
		return "", "", fmt.Errorf("write result: %w", err)
	}
	htmlPath = filepath.Join(dir, r.Name+".html")
	f, err := os.Create(htmlPath)
	if err != nil {
		return "", "", fmt.Errorf("write chart: %w", err)
	}
	if err := WriteHTML(f, r); err != nil {
		f.Close()
		return "", "", fmt.Errorf("write chart: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("write chart: %w", err)
	}
	return jsonPath, htmlPath, nil
}

// ReadResult reads a result file.
func ReadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	if r.Version != ResultVersion {
		return nil, fmt.Errorf("%s: result version %d, this build reads %d", path, r.Version, ResultVersion)
	}
	return &r, nil
}
