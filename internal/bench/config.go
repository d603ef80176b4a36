package bench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Scenario names a workload, as iggy-bench names its benchmarks.
type Scenario string

// The scenarios. "Pinned": every actor owns one stream and reads or
// writes its partition 0. "Balanced": producers send with Balanced
// partitioning (the server picks the partition round robin) and consumers
// read as consumer-group members, so the server assigns partitions.
const (
	// PinnedProducer: producer i sends to stream i.
	PinnedProducer Scenario = "pinned-producer"
	// PinnedConsumer: stream i is filled first (not measured), then
	// consumer i reads it by offset.
	PinnedConsumer Scenario = "pinned-consumer"
	// PinnedProducerAndConsumer: producer i and consumer i share stream
	// i, at the same time.
	PinnedProducerAndConsumer Scenario = "pinned-producer-and-consumer"
	// BalancedProducer: producers send to the streams round robin
	// (producer i to stream i mod streams) with Balanced partitioning.
	BalancedProducer Scenario = "balanced-producer"
	// BalancedConsumerGroup: the streams are filled first, then one
	// consumer group per stream reads them (consumer i joins the group of
	// stream i mod streams).
	BalancedConsumerGroup Scenario = "balanced-consumer-group"
	// BalancedProducerAndConsumerGroup: BalancedProducer and
	// BalancedConsumerGroup at the same time.
	BalancedProducerAndConsumerGroup Scenario = "balanced-producer-and-consumer-group"
	// EndToEndProducingConsumer: actor i sends a batch to stream i, polls
	// until it has read that batch back, and repeats; its latency is the
	// whole round.
	EndToEndProducingConsumer Scenario = "end-to-end-producing-consumer"
)

// Scenarios lists every scenario, in the order of the documentation.
var Scenarios = []Scenario{
	PinnedProducer, PinnedConsumer, PinnedProducerAndConsumer,
	BalancedProducer, BalancedConsumerGroup, BalancedProducerAndConsumerGroup,
	EndToEndProducingConsumer,
}

// Aliases are the short names iggy-bench accepts for its scenarios.
var Aliases = map[Scenario]string{
	PinnedProducer: "pp", PinnedConsumer: "pc", PinnedProducerAndConsumer: "ppc",
	BalancedProducer: "bp", BalancedConsumerGroup: "bcg", BalancedProducerAndConsumerGroup: "bpcg",
	EndToEndProducingConsumer: "e2e",
}

// Produces reports whether the scenario has producers (measured).
func (s Scenario) Produces() bool {
	return s != PinnedConsumer && s != BalancedConsumerGroup
}

// Consumes reports whether the scenario reads messages back.
func (s Scenario) Consumes() bool {
	return s != PinnedProducer && s != BalancedProducer
}

// Pinned reports whether actors own a stream each.
func (s Scenario) Pinned() bool {
	return s == PinnedProducer || s == PinnedConsumer || s == PinnedProducerAndConsumer || s == EndToEndProducingConsumer
}

// fillsFirst reports whether the scenario only consumes, so its streams
// are filled before the measured phase.
func (s Scenario) fillsFirst() bool { return !s.Produces() }

// Defaults of the parameters (iggy-bench's for sizes and counts).
const (
	DefaultMessageSize      = 1000
	DefaultMessagesPerBatch = 1000
	DefaultMessageBatches   = 1000
	DefaultActors           = 2
	DefaultBalancedStreams  = 1
	DefaultSamplingTime     = 100 * time.Millisecond
	DefaultBaseline         = 2 * time.Second
	DefaultDiskBaseline     = 2 * time.Second
	DefaultCacheBaseline    = time.Second
	DefaultResourceSampling = time.Second
	DefaultUsername         = "iggy"
	DefaultPassword         = "iggy"
	// MaxActors bounds producers and consumers: each is a connection and
	// a goroutine.
	MaxActors = 1000
	// MaxMessageSize bounds --message-size so a batch stays under the
	// default 64 MiB frame limit together with --messages-per-batch.
	MaxMessageSize = 10 << 20
	// maxBatchBytes is the largest batch (headers included) the tool
	// builds: under the broker's default 64 MiB frame.
	maxBatchBytes = 60 << 20
)

// Config is one benchmark run. Zero fields take the defaults (see
// Normalize); a field's doc names its command-line flag.
type Config struct {
	Scenario Scenario
	// Producers (--producers) is the number of producers; for
	// end-to-end-producing-consumer, the number of producing consumers.
	Producers int
	// Consumers (--consumers) is the number of consumers.
	Consumers int
	// Streams (--streams): pinned scenarios need one per actor (the
	// default); balanced ones default to 1.
	Streams int
	// Partitions (--partitions) per topic: 1 for pinned scenarios;
	// balanced ones default to the number of actors per stream.
	Partitions int
	// MessageSize (--message-size) is the payload size in bytes.
	MessageSize int
	// MessagesPerBatch (--messages-per-batch) is the batch size; consumers
	// poll this many messages at a time.
	MessagesPerBatch int
	// MessageBatches (--message-batches) is the number of measured batches
	// per producer (per consumer for the consume-only scenarios, which
	// fill that much first). Ignored when Duration or TotalData is set.
	MessageBatches uint64
	// TotalData (--total-data) is the payload bytes to send over all
	// producers (to fill over all consumers), rounded up to whole batches
	// per actor.
	TotalData uint64
	// Duration (--duration) runs the measured phase for this long instead
	// of a count. Not for the consumer-group-only scenario, which reads a
	// fixed fill.
	Duration time.Duration
	// RateLimit (--rate-limit) caps the payload bytes per second over all
	// producers (over all consumers when there are none), split evenly.
	// 0: unlimited.
	RateLimit uint64
	// WarmupTime (--warmup-time): actors run this long before anything is
	// measured.
	WarmupTime time.Duration
	// EnforceFsync (--enforce-fsync) creates the topics with the
	// enforce_fsync option: every send waits for its fdatasync.
	EnforceFsync bool
	// SamplingTime (--sampling-time) is the period of the throughput time
	// series.
	SamplingTime time.Duration

	// Addr (--addr) is the server; empty starts an embedded broker in a
	// temporary directory (DataPath when set).
	Addr string
	// DataPath (--data-path) is the embedded broker's data directory
	// (default: a new temporary directory, removed afterwards).
	DataPath string
	// Transport (--transport): "tcp", "quic", "ws" (WebSocket; WSS with
	// TLS) or "http" (produce and poll over the HTTP API, http.go). QUIC always runs TLS 1.3: without --tls-ca-file the server's
	// certificate is not verified, as the reference SDKs do by default.
	Transport string
	// HTTPAddr (--http-addr) is the HTTP API of an external server with
	// --transport http (setup still uses --addr over TCP); default
	// 127.0.0.1:3000.
	HTTPAddr string
	// TLS (--tls) and its settings (--tls-ca-file, --tls-server-name,
	// --tls-insecure). With an embedded broker, TLS uses a self-signed
	// certificate and the client skips verification.
	TLS           bool
	TLSCAFile     string
	TLSServerName string
	TLSInsecure   bool
	// Username and Password (--username, --password).
	Username, Password string
	// NoPartitionRouting (--partition-routing=false) sends every request
	// to the node the client connected to, as an official SDK does; by
	// default a cluster's partition requests go to each partition's
	// leader (client.WithPartitionRouting).
	NoPartitionRouting bool

	// Baseline (--baseline) is how long to measure loopback TCP
	// throughput before the benchmark; 0 skips it.
	Baseline time.Duration
	// DiskBaseline (--disk-baseline) is how long to measure 1 MiB writes
	// each followed by fdatasync before the benchmark; 0 skips it.
	DiskBaseline time.Duration
	// CacheBaseline (--cache-baseline) is how long to measure 1 MiB
	// writes without sync (the page cache) before the benchmark, in the
	// disk baseline's directory; 0 skips it.
	CacheBaseline time.Duration
	// DiskBaselineDir (--disk-baseline-dir) is where the disk baseline
	// writes: it should be on the broker's data file system. Default: the
	// embedded broker's data directory, else the system temporary
	// directory.
	DiskBaselineDir string
	// ResourceSampling (--resource-sampling) is the period of the samples
	// of the broker's process (RSS, threads, open files, CPU; heap and
	// goroutines for the embedded broker) when it runs on this machine;
	// 0 takes none.
	ResourceSampling time.Duration
	// SegmentSize (--segment-size) and MaxTopicSize (--max-topic-size),
	// when not zero, set the topics' segment_size and max_topic_size
	// (retention by size).
	SegmentSize, MaxTopicSize uint64
	// RetentionInterval (--retention-interval) is the embedded broker's
	// retention period (data_maintenance.messages.interval); 0 keeps its
	// default.
	RetentionInterval time.Duration
	// OutputDir (--output-dir) receives NAME.json and NAME.html; empty
	// writes nothing.
	OutputDir string
	// Name (--name) names the result files (default: scenario and time).
	Name string
	// Progress receives live progress; nil for none.
	Progress io.Writer
	// ProgressANSI redraws per-actor bars in place (a terminal); otherwise
	// one line is appended per second.
	ProgressANSI bool
	// Log receives the embedded broker's warnings; nil discards them.
	Log io.Writer
	// StreamPrefix names the streams PREFIX-1..N (default "bench"). Existing
	// streams of these names are deleted first.
	StreamPrefix string
}

// Normalize fills defaults and checks the combination.
func (c *Config) Normalize() error {
	if !slices.Contains(Scenarios, c.Scenario) {
		return fmt.Errorf("unknown scenario %q", c.Scenario)
	}
	if c.MessageSize == 0 {
		c.MessageSize = DefaultMessageSize
	}
	if c.MessagesPerBatch == 0 {
		c.MessagesPerBatch = DefaultMessagesPerBatch
	}
	if c.SamplingTime == 0 {
		c.SamplingTime = DefaultSamplingTime
	}
	if c.Transport == "" {
		c.Transport = "tcp"
	}
	if c.Username == "" && c.Password == "" {
		c.Username, c.Password = DefaultUsername, DefaultPassword
	}
	if c.StreamPrefix == "" {
		c.StreamPrefix = "bench"
	}
	s := c.Scenario
	if s.Produces() && c.Producers == 0 {
		c.Producers = DefaultActors
	}
	if s.Consumes() && s != EndToEndProducingConsumer && c.Consumers == 0 {
		c.Consumers = DefaultActors
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case !s.Produces() && c.Producers != 0:
		bad("%s has no producers (--producers %d)", s, c.Producers)
	case (!s.Consumes() || s == EndToEndProducingConsumer) && c.Consumers != 0:
		bad("%s has no separate consumers (--consumers %d); end-to-end actors are counted by --producers", s, c.Consumers)
	}
	actors := max(c.Producers, c.Consumers)
	if c.Producers < 0 || c.Consumers < 0 || c.Producers > MaxActors || c.Consumers > MaxActors {
		bad("producers and consumers must be within 0..%d", MaxActors)
	}
	if s.Pinned() {
		if c.Streams == 0 {
			c.Streams = actors
		}
		if c.Partitions == 0 {
			c.Partitions = 1
		}
		if c.Streams != actors {
			bad("%s pins each actor to its own stream: --streams must be %d", s, actors)
		}
		if s == PinnedProducerAndConsumer && c.Producers != c.Consumers {
			bad("%s pairs producer i with consumer i: --producers and --consumers must be equal", s)
		}
		if c.Partitions != 1 {
			bad("%s uses partition 0 of each stream: --partitions must be 1", s)
		}
	} else {
		if c.Streams == 0 {
			c.Streams = DefaultBalancedStreams
		}
		if c.Partitions == 0 {
			c.Partitions = max((actors+c.Streams-1)/c.Streams, 1)
		}
		if c.Streams > actors && actors > 0 {
			bad("%s needs at least one actor per stream (--streams %d, actors %d)", s, c.Streams, actors)
		}
	}
	if c.Streams < 1 || c.Streams > MaxActors || c.Partitions < 1 || c.Partitions > MaxActors {
		bad("streams and partitions must be within 1..%d", MaxActors)
	}
	if c.MessageSize < 1 || c.MessageSize > MaxMessageSize {
		bad("--message-size must be within 1..%d", MaxMessageSize)
	}
	if c.MessagesPerBatch < 1 || c.MessagesPerBatch*(c.MessageSize+64) > maxBatchBytes {
		bad("--messages-per-batch × (--message-size + 64) must be within 1..%d bytes", maxBatchBytes)
	}
	if c.Duration < 0 || c.WarmupTime < 0 || c.Baseline < 0 || c.DiskBaseline < 0 || c.CacheBaseline < 0 || c.ResourceSampling < 0 || c.RetentionInterval < 0 || c.SamplingTime < time.Millisecond {
		bad("durations must not be negative; --sampling-time at least 1ms")
	}
	if c.Duration > 0 && (c.MessageBatches != 0 || c.TotalData != 0) || c.MessageBatches != 0 && c.TotalData != 0 {
		bad("give one of --message-batches, --total-data and --duration")
	}
	if c.Duration > 0 && s == BalancedConsumerGroup {
		bad("%s reads a fixed fill: use --message-batches or --total-data", s)
	}
	switch c.Transport {
	case "tcp", "quic", "ws", "http":
	default:
		bad("transport %q: want tcp, quic, ws or http", c.Transport)
	}
	if c.Transport == "http" && !s.Pinned() && s.Consumes() {
		bad("%s reads as consumer-group members, which the HTTP API does not serve: use a pinned scenario", s)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if c.Duration == 0 && c.MessageBatches == 0 {
		c.MessageBatches = DefaultMessageBatches
		if c.TotalData > 0 {
			per := uint64(c.MessageSize) * uint64(c.MessagesPerBatch) * uint64(actors)
			c.MessageBatches = max((c.TotalData+per-1)/per, 1)
		}
	}
	return nil
}

// batchPayload is the payload bytes of one batch.
func (c *Config) batchPayload() uint64 { return uint64(c.MessageSize) * uint64(c.MessagesPerBatch) }
