package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/bench"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/spf13/cobra"
)

// benchFlags are the flags of every `iggo bench` scenario, in text form
// where they take sizes or durations ("1 GB", "10s").
type benchFlags struct {
	cfg        bench.Config
	totalData  string
	rateLimit  string
	duration   string
	warmup     string
	sampling   string
	baseline   string
	disk       string
	cache      string
	resources  string
	retention  string
	segment    string
	maxTopic   string
	progress   bool
	noProgress bool
	routing    bool
}

func newBenchCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench SCENARIO",
		Short: "Measure throughput and latency (the scenarios of iggy-bench)",
		Long: `Measure the throughput and latency of a server, or of an embedded broker started in a
temporary directory when --addr is not given. Every producer and consumer is its own
connection sending (or polling) one batch at a time.

A loopback TCP baseline of the same machine is measured first (--baseline, 0 skips it).
The summary goes to standard output; with --output-dir the result (NAME.json) and a chart
(NAME.html) are written there. Live progress goes to standard error when it is a terminal
(or with --progress). See bench/README.md for how each published figure was made.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				names := make([]string, len(bench.Scenarios))
				for i, s := range bench.Scenarios {
					names[i] = string(s)
				}
				return fmt.Errorf("unknown scenario %q; one of: %s", args[0], strings.Join(names, ", "))
			}
			return cmd.Help()
		},
	}
	for _, s := range bench.Scenarios {
		cmd.AddCommand(newBenchScenarioCmd(env, s))
	}
	cmd.AddCommand(newBenchCompareCmd(env), newBenchScaleCmd(env))
	return cmd
}

func newBenchScaleCmd(env Env) *cobra.Command {
	cfg := bench.ScaleConfig{}
	var idle string
	var keep bool
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Create many partitions, connect many idle clients, and measure the idle broker",
		Long: `Create STREAMS × TOPICS × PARTITIONS partitions on the broker at --addr (or expect them
with --create=false, for a restarted broker), log in --clients connections with a personal
access token and keep them idle, then observe the broker for --idle: its CPU time, resident
memory, threads and open files (when it runs on this machine) and its own counts. The time
until the broker first answers is reported too, the start-up time when it was just started.
See bench/README.md ("Scale") for the script that restarts the broker in between.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := config.ParseDuration(idle)
			if err != nil {
				return fmt.Errorf("--idle %q: %w", idle, err)
			}
			cfg.Idle, cfg.Remove = d, !keep
			cfg.Progress = env.Stderr
			res, err := bench.RunScale(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "ready after %.2fs; %d streams, %d topics, %d partitions, %d clients on the broker\n",
				res.ReadySeconds, res.Streams, res.Topics, res.Partitions, res.ServerClients)
			if res.CreateSeconds > 0 || res.ConnectSeconds > 0 {
				fmt.Fprintf(env.Stdout, "created in %.1fs; %d clients connected in %.1fs\n", res.CreateSeconds, res.Clients, res.ConnectSeconds)
			}
			if a := res.After; a != nil {
				fmt.Fprintf(env.Stdout, "idle %.0fs: broker CPU %.2fs (%.2f%% of one CPU), RSS %.1f MiB, %d threads, %d open files\n",
					res.IdleSeconds, res.IdleCPUSeconds, res.IdleCPUPercent, float64(a.RSS)/(1<<20), a.Threads, a.OpenFiles)
			} else {
				fmt.Fprintf(env.Stdout, "idle %.0fs: the broker is not a process of this machine; its memory_usage is %.1f MiB\n",
					res.IdleSeconds, float64(res.MemoryUsage)/(1<<20))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Addr, "addr", "127.0.0.1:8090", "server address host:port")
	fl.StringVar(&cfg.Username, "username", bench.DefaultUsername, "user to log in as")
	fl.StringVar(&cfg.Password, "password", bench.DefaultPassword, "password")
	fl.StringVar(&cfg.Prefix, "stream-prefix", "scale", "streams are PREFIX-1..N")
	fl.IntVar(&cfg.Streams, "streams", 100, "streams")
	fl.IntVar(&cfg.TopicsPerStream, "topics", 10, "topics per stream")
	fl.IntVar(&cfg.PartitionsPerTopic, "partitions", 10, "partitions per topic")
	fl.BoolVar(&cfg.Create, "create", true, "create the streams (false: they exist, e.g. after a restart)")
	fl.IntVar(&cfg.Clients, "clients", 1000, "idle connections to keep open")
	fl.StringVar(&idle, "idle", "30s", "how long to observe the idle broker")
	fl.BoolVar(&keep, "keep", false, "keep the streams at the end")
	fl.StringVar(&cfg.Output, "output", "", "write the result as JSON to this file")
	return cmd
}

func newBenchCompareCmd(env Env) *cobra.Command {
	var medians bool
	cmd := &cobra.Command{
		Use:   "compare RESULT.json...",
		Short: "Print the figures of result files side by side",
		Long: `Print the figures of result files side by side, one row per result and kind of actor.
With --medians, results whose names differ only in a _runN suffix are taken as repetitions
of one figure and each column is their median (ratios to the baselines per run first).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var rs []*bench.Result
			for _, path := range args {
				r, err := bench.ReadResult(path)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			if medians {
				return bench.WriteMedians(env.Stdout, rs)
			}
			return bench.WriteComparison(env.Stdout, rs)
		},
	}
	cmd.Flags().BoolVar(&medians, "medians", false, "one row per figure: the medians over its runs")
	return cmd
}

var scenarioHelp = map[bench.Scenario]string{
	bench.PinnedProducer:                   "each producer sends to its own stream",
	bench.PinnedConsumer:                   "each consumer reads its own pre-filled stream",
	bench.PinnedProducerAndConsumer:        "producer i and consumer i share stream i",
	bench.BalancedProducer:                 "producers send to shared topics, the server picks partitions",
	bench.BalancedConsumerGroup:            "consumer groups read pre-filled shared topics",
	bench.BalancedProducerAndConsumerGroup: "balanced producers and consumer groups at once",
	bench.EndToEndProducingConsumer:        "each actor sends a batch and reads it back",
}

func newBenchScenarioCmd(env Env, s bench.Scenario) *cobra.Command {
	f := &benchFlags{cfg: bench.Config{Scenario: s}}
	cmd := &cobra.Command{
		Use:     string(s),
		Aliases: []string{bench.Aliases[s]},
		Short:   scenarioHelp[s],
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runBench(cmd, env, f) },
	}
	c := &f.cfg
	fl := cmd.Flags()
	fl.IntVar(&c.Producers, "producers", 0, fmt.Sprintf("producers (producing consumers for %s) (default %d where the scenario has them)", bench.EndToEndProducingConsumer, bench.DefaultActors))
	fl.IntVar(&c.Consumers, "consumers", 0, fmt.Sprintf("consumers (default %d where the scenario has them)", bench.DefaultActors))
	fl.IntVar(&c.Streams, "streams", 0, "streams (default: one per actor when pinned, 1 when balanced)")
	fl.IntVar(&c.Partitions, "partitions", 0, "partitions per topic (default: 1 when pinned, actors per stream when balanced)")
	fl.IntVar(&c.MessageSize, "message-size", bench.DefaultMessageSize, "payload bytes per message")
	fl.IntVar(&c.MessagesPerBatch, "messages-per-batch", bench.DefaultMessagesPerBatch, "messages per batch (and per poll)")
	fl.Uint64Var(&c.MessageBatches, "message-batches", 0, fmt.Sprintf("measured batches per actor (default %d unless --total-data or --duration)", bench.DefaultMessageBatches))
	fl.StringVar(&f.totalData, "total-data", "", "payload to send over all actors instead of --message-batches, e.g. \"10 GB\"")
	fl.StringVar(&f.duration, "duration", "", "measure for this long instead of a count, e.g. \"30s\"")
	fl.StringVar(&f.rateLimit, "rate-limit", "", "total payload bytes per second over all producers (consumers when none), e.g. \"100 MB\"")
	fl.StringVar(&f.warmup, "warmup-time", "0", "run this long before measuring, e.g. \"5s\"")
	fl.BoolVar(&c.EnforceFsync, "enforce-fsync", false, "create the topics with enforce_fsync: each send waits for its fdatasync")
	fl.StringVar(&f.sampling, "sampling-time", "100ms", "period of the throughput time series")
	fl.StringVar(&c.Addr, "addr", "", "server address host:port (default: start an embedded broker)")
	fl.StringVar(&c.DataPath, "data-path", "", "data directory of the embedded broker (default: a temporary directory, removed afterwards)")
	fl.StringVar(&c.Transport, "transport", "tcp", "transport: tcp, quic, ws (WebSocket; WSS with --tls) or http (produce and poll over the HTTP API; setup over TCP)")
	fl.StringVar(&c.HTTPAddr, "http-addr", "", "HTTP API address for --transport http against --addr (default "+bench.DefaultHTTPAddr+")")
	fl.BoolVar(&c.TLS, "tls", false, "use TLS (the embedded broker uses a self-signed certificate)")
	fl.StringVar(&c.TLSCAFile, "tls-ca-file", "", "PEM file of the CA that signed the server certificate")
	fl.StringVar(&c.TLSServerName, "tls-server-name", "", "server name to verify (default: the host of --addr)")
	fl.BoolVar(&c.TLSInsecure, "tls-insecure", false, "do not verify the server certificate")
	fl.StringVar(&c.Username, "username", bench.DefaultUsername, "user to log in as (the embedded broker's root user)")
	fl.StringVar(&c.Password, "password", bench.DefaultPassword, "password")
	fl.BoolVar(&f.routing, "partition-routing", true, "in a cluster, send each partition's requests to its leader; false sends everything through the node connected to, which forwards them (as an official SDK)")
	fl.StringVar(&f.baseline, "baseline", bench.DefaultBaseline.String(), "measure loopback TCP throughput this long first; 0 skips it and, unless --disk-baseline or --cache-baseline is given, those baselines too")
	fl.StringVar(&f.disk, "disk-baseline", "", "measure 1 MiB writes each followed by fdatasync this long first; 0 skips it (default "+bench.DefaultDiskBaseline.String()+", 0 with --baseline 0)")
	fl.StringVar(&f.cache, "cache-baseline", "", "measure 1 MiB writes without sync (the page cache) this long first, in the disk baseline's directory; 0 skips it (default "+bench.DefaultCacheBaseline.String()+", 0 with --baseline 0)")
	fl.StringVar(&c.DiskBaselineDir, "disk-baseline-dir", "", "directory of the disk and page-cache baselines, on the broker's data file system (default: the embedded broker's data directory, else the temporary directory)")
	fl.StringVar(&f.resources, "resource-sampling", bench.DefaultResourceSampling.String(), "sample the broker process (RSS, threads, open files, CPU; heap and goroutines when embedded) this often when it runs on this machine; 0 never")
	fl.StringVar(&f.segment, "segment-size", "", "segment_size of the benchmark topics, e.g. \"16 MiB\" (default: the server's)")
	fl.StringVar(&f.maxTopic, "max-topic-size", "", "max_topic_size of the benchmark topics (retention by size), e.g. \"256 MiB\" (default: unlimited)")
	fl.StringVar(&f.retention, "retention-interval", "", "the embedded broker's retention period (data_maintenance.messages.interval), e.g. \"10s\"")
	fl.StringVar(&c.OutputDir, "output-dir", "", "write NAME.json and NAME.html here")
	fl.StringVar(&c.Name, "name", "", "name of the result files (default: SCENARIO_fsync|nofsync_TIME)")
	fl.StringVar(&c.StreamPrefix, "stream-prefix", "bench", "streams are PREFIX-1..N; existing ones of these names are deleted first")
	fl.BoolVar(&f.progress, "progress", false, "show progress even when standard error is not a terminal")
	fl.BoolVar(&f.noProgress, "no-progress", false, "never show progress")
	return cmd
}

// parseBenchFlags turns the text flags into the Config.
func parseBenchFlags(f *benchFlags) (bench.Config, error) {
	c := f.cfg
	var errs []error
	dur := func(name, s string, dst *time.Duration) {
		if s == "" {
			return
		}
		d, err := config.ParseDuration(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s %q: %w", name, s, err))
		}
		*dst = d
	}
	size := func(name, s string, dst *uint64) {
		if s == "" {
			return
		}
		v, err := config.ParseSize(strings.TrimSuffix(strings.TrimSuffix(s, "/s"), "ps"))
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s %q: %w", name, s, err))
		}
		*dst = v
	}
	c.NoPartitionRouting = !f.routing
	dur("duration", f.duration, &c.Duration)
	dur("warmup-time", f.warmup, &c.WarmupTime)
	dur("sampling-time", f.sampling, &c.SamplingTime)
	dur("baseline", f.baseline, &c.Baseline)
	// --baseline 0 turns every baseline off; --disk-baseline and
	// --cache-baseline, when given, still apply.
	c.DiskBaseline, c.CacheBaseline = bench.DefaultDiskBaseline, bench.DefaultCacheBaseline
	if f.baseline != "" && c.Baseline == 0 {
		c.DiskBaseline, c.CacheBaseline = 0, 0
	}
	dur("disk-baseline", f.disk, &c.DiskBaseline)
	dur("cache-baseline", f.cache, &c.CacheBaseline)
	dur("resource-sampling", f.resources, &c.ResourceSampling)
	dur("retention-interval", f.retention, &c.RetentionInterval)
	size("segment-size", f.segment, &c.SegmentSize)
	size("max-topic-size", f.maxTopic, &c.MaxTopicSize)
	size("total-data", f.totalData, &c.TotalData)
	size("rate-limit", f.rateLimit, &c.RateLimit)
	return c, errors.Join(errs...)
}

// isTerminal reports whether w is a character device (a terminal, in
// practice), without a terminal library.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func runBench(cmd *cobra.Command, env Env, f *benchFlags) error {
	cfg, err := parseBenchFlags(f)
	if err != nil {
		return err
	}
	tty := isTerminal(env.Stderr)
	if !f.noProgress && (tty || f.progress) {
		cfg.Progress, cfg.ProgressANSI = env.Stderr, tty
	}
	cfg.Log = env.Stderr
	res, err := bench.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if err := bench.WriteReport(env.Stdout, res); err != nil {
		return err
	}
	if cfg.OutputDir != "" {
		fmt.Fprintf(env.Stdout, "wrote %s.json and %s.html in %s\n", res.Name, res.Name, cfg.OutputDir)
	}
	if !res.Check.OK {
		return fmt.Errorf("accounting check failed: %s", res.Check)
	}
	return nil
}
