package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

const (
	// topicName is the one topic of every benchmark stream.
	topicName = "bench"
	// groupName is the consumer group of every stream in the balanced
	// consumer scenarios.
	groupName = "bench-group"
	// durationFillBatches is the fill per consumer of pinned-consumer
	// under --duration, re-read until the end.
	durationFillBatches = 100
)

// runner holds one run's state.
type runner struct {
	cfg     *Config
	t       *target
	admin   *client.Client
	streams []*streamInfo
	units   []*unit
	actors  []*actor
}

// Run executes one benchmark and returns its result; with cfg.OutputDir
// the result and chart files are written too (see Result.WriteFiles).
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	res = &Result{Version: ResultVersion, Scenario: cfg.Scenario, StartedAt: time.Now().UTC(), Params: paramsOf(&cfg), Env: currentEnv()}
	res.Name = cfg.Name
	if res.Name == "" {
		fs := "nofsync"
		if cfg.EnforceFsync {
			fs = "fsync"
		}
		res.Name = fmt.Sprintf("%s_%s_%s", cfg.Scenario, fs, res.StartedAt.Format("20060102-150405"))
	}
	if cfg.Baseline > 0 {
		if res.Baseline, err = MeasureLoopback(ctx, cfg.Baseline); err != nil {
			return nil, err
		}
	}
	t, err := startTarget(&cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := t.stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	res.Params.Server = t.label
	dir := cfg.DiskBaselineDir
	if dir == "" {
		dir = t.dataDir
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if cfg.CacheBaseline > 0 {
		if res.Cache, err = MeasureCache(ctx, dir, cfg.CacheBaseline); err != nil {
			return nil, err
		}
	}
	if cfg.DiskBaseline > 0 {
		if res.Disk, err = MeasureDisk(ctx, dir, cfg.DiskBaseline); err != nil {
			return nil, err
		}
	}
	r := &runner{cfg: &cfg, t: t}
	defer r.close()
	if r.admin, err = t.dial(ctx, &cfg); err != nil {
		return nil, err
	}
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	if cfg.Scenario.fillsFirst() {
		if res.Fill, err = r.fill(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	res.Process = findProcess(ctx, t, r.admin)
	cpu := startCPU(res.Process)
	rs := startResources(res.Process, time.Now().Add(cfg.WarmupTime), cfg.ResourceSampling)
	k, series, err := r.measure(ctx)
	res.Resources = rs.stop()
	if err != nil {
		return nil, err
	}
	r.collect(res, k, series)
	var payload uint64
	for _, g := range res.Groups {
		payload += g.PayloadBytes
	}
	res.CPU = cpu.stop(payload)
	if err := r.check(ctx, &res.Check); err != nil {
		return nil, err
	}
	if t.label != "embedded" {
		r.cleanup(ctx)
	}
	res.Env.LoadAfter = loadAverage()
	if cfg.OutputDir != "" {
		if _, _, err := res.WriteFiles(cfg.OutputDir); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func paramsOf(c *Config) Params {
	return Params{
		Producers: c.Producers, Consumers: c.Consumers, Streams: c.Streams, Partitions: c.Partitions,
		MessageSize: c.MessageSize, MessagesPerBatch: c.MessagesPerBatch, MessageBatches: c.MessageBatches,
		DurationSeconds: c.Duration.Seconds(), RateLimit: c.RateLimit, WarmupSeconds: c.WarmupTime.Seconds(),
		EnforceFsync: c.EnforceFsync, SegmentSize: c.SegmentSize, MaxTopicSize: c.MaxTopicSize, SamplingMillis: float64(c.SamplingTime) / float64(time.Millisecond),
		Transport: c.Transport, TLS: c.TLS,
	}
}

// close closes every connection.
func (r *runner) close() {
	for _, a := range r.actors {
		if a.c != nil {
			a.c.Close()
		}
	}
	if r.admin != nil {
		r.admin.Close()
	}
}

// setup creates the streams PREFIX-1..N (deleting old ones of the same
// name), each with one topic and, for group consumers, one group.
func (r *runner) setup(ctx context.Context) error {
	cfg := r.cfg
	var topicOpts []wire.Option
	if cfg.EnforceFsync {
		topicOpts = append(topicOpts, wire.BoolOption(wire.TopicOptEnforceFsync, true))
	}
	if cfg.SegmentSize > 0 {
		topicOpts = append(topicOpts, wire.Uint64Option(wire.TopicOptSegmentSize, cfg.SegmentSize))
	}
	if cfg.MaxTopicSize > 0 {
		topicOpts = append(topicOpts, wire.Uint64Option(wire.TopicOptMaxTopicSize, cfg.MaxTopicSize))
	}
	groups := cfg.Scenario.Consumes() && !cfg.Scenario.Pinned()
	for i := 1; i <= cfg.Streams; i++ {
		name := fmt.Sprintf("%s-%d", cfg.StreamPrefix, i)
		_, err := r.admin.GetStream(ctx, wire.NamedID(name))
		switch {
		case err == nil:
			if err := r.admin.DeleteStream(ctx, wire.NamedID(name)); err != nil {
				return fmt.Errorf("delete old stream %s: %w", name, err)
			}
		case !errors.Is(err, wire.ErrStreamIDNotFound):
			return fmt.Errorf("look up stream %s: %w", name, err)
		}
		sd, err := r.admin.CreateStream(ctx, name)
		if err != nil {
			return fmt.Errorf("create stream %s: %w", name, err)
		}
		st := &streamInfo{name: name, stream: wire.NumericID(sd.ID), partitions: cfg.Partitions}
		td, err := r.admin.CreateTopic(ctx, st.stream, topicName, uint32(cfg.Partitions), topicOpts...)
		if err != nil {
			return fmt.Errorf("create topic in %s: %w", name, err)
		}
		st.topic = wire.NumericID(td.ID)
		if cfg.EnforceFsync {
			// A figure labelled fsync must be one: refuse a server that
			// did not keep the option.
			if o, ok := td.Options.Get(wire.TopicOptEnforceFsync); !ok || len(o.Value) != 1 || o.Value[0] != 1 {
				return fmt.Errorf("topic in %s: the server did not keep enforce_fsync", name)
			}
		}
		if groups {
			gd, err := r.admin.CreateConsumerGroup(ctx, st.stream, st.topic, groupName)
			if err != nil {
				return fmt.Errorf("create consumer group in %s: %w", name, err)
			}
			st.group, st.groupName = wire.NumericID(gd.ID), groupName
		}
		r.streams = append(r.streams, st)
		r.units = append(r.units, &unit{})
	}
	r.plan()
	return nil
}

// plan lays out the actors: actor i (from 1) of a kind uses stream
// (i-1) mod streams.
func (r *runner) plan() {
	cfg := r.cfg
	s := cfg.Scenario
	pinned := s.Pinned()
	add := func(kind ActorKind, i int) *actor {
		si := (i - 1) % len(r.streams)
		a := &actor{kind: kind, id: i, st: r.streams[si], u: r.units[si], partition: -1}
		if pinned {
			a.partition = 0
		}
		r.actors = append(r.actors, a)
		return a
	}
	perActorRate := func(n int) float64 {
		if cfg.RateLimit == 0 || n == 0 {
			return 0
		}
		return float64(cfg.RateLimit) / float64(n)
	}
	switch {
	case s == EndToEndProducingConsumer:
		for i := 1; i <= cfg.Producers; i++ {
			a := add(KindProducingConsumer, i)
			a.rate, a.target, a.trackAge = perActorRate(cfg.Producers), cfg.MessageBatches, true
			a.u.feeders.Add(1)
		}
		return
	case s.Produces():
		for i := 1; i <= cfg.Producers; i++ {
			a := add(KindProducer, i)
			a.rate, a.target = perActorRate(cfg.Producers), cfg.MessageBatches
			a.u.feeders.Add(1)
		}
	}
	rate := 0.0
	if !s.Produces() {
		rate = perActorRate(cfg.Consumers)
	}
	for i := 1; i <= cfg.Consumers; i++ {
		a := add(KindConsumer, i)
		a.rate, a.fill, a.trackAge = rate, s.fillsFirst(), s.Produces()
	}
}

// fill stores the data of a consume-only scenario: per consumer
// MessageBatches batches on its stream (spread over the partitions), not
// measured, one connection per stream in parallel.
func (r *runner) fill(ctx context.Context) (*Fill, error) {
	cfg := r.cfg
	perConsumer := cfg.MessageBatches
	if perConsumer == 0 {
		perConsumer = durationFillBatches
	}
	batches := make([]uint64, len(r.streams))
	for _, a := range r.actors {
		for si, st := range r.streams {
			if a.st == st {
				batches[si] += perConsumer
			}
		}
	}
	start := time.Now()
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "filling %d streams with %d messages of %d bytes (not measured)...\n",
			len(r.streams), sum(batches)*uint64(cfg.MessagesPerBatch), cfg.MessageSize)
	}
	errs := make([]error, len(r.streams))
	var wg sync.WaitGroup
	for si, st := range r.streams {
		wg.Go(func() {
			c, err := r.t.dial(ctx, cfg)
			if err != nil {
				errs[si] = err
				return
			}
			defer c.Close()
			src, err := newBatchSource(cfg, 1000000+si)
			if err != nil {
				errs[si] = fmt.Errorf("fill %s: %w", st.name, err)
				return
			}
			for b := range batches[si] {
				p := wire.PartitioningByID(uint32(b % uint64(st.partitions)))
				if _, err := c.SendBatch(ctx, st.stream, st.topic, p, src.next(time.Now())); err != nil {
					errs[si] = fmt.Errorf("fill %s: %w", st.name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	f := &Fill{Seconds: time.Since(start).Seconds()}
	for si, u := range r.units {
		n := batches[si] * uint64(cfg.MessagesPerBatch)
		u.sent.Store(n)
		u.final.Store(true)
		f.Messages += n
	}
	f.Bytes = f.Messages * uint64(cfg.MessageSize)
	return f, nil
}

func sum(v []uint64) (s uint64) {
	for _, x := range v {
		s += x
	}
	return s
}

// connect gives every actor its connection and makes group consumers
// members of their group, all before the clock starts.
func (r *runner) connect(ctx context.Context) error {
	errs := make([]error, len(r.actors))
	var wg sync.WaitGroup
	for i, a := range r.actors {
		wg.Go(func() {
			c, err := r.t.dial(ctx, r.cfg)
			if err != nil {
				errs[i] = err
				return
			}
			a.c = c
			if err := a.connectHTTP(ctx, r.t, r.cfg); err != nil {
				errs[i] = err
				return
			}
			if a.kind == KindConsumer && a.partition < 0 {
				if err := c.JoinConsumerGroup(ctx, a.st.stream, a.st.topic, a.st.group); err != nil {
					errs[i] = fmt.Errorf("consumer %d: join group: %w", a.id, err)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// measure runs every actor until it is done, sampling throughput.
func (r *runner) measure(ctx context.Context) (*clock, *samples, error) {
	cfg := r.cfg
	start := time.Now()
	k := &clock{warmupEnd: start.Add(cfg.WarmupTime)}
	if cfg.Duration > 0 {
		k.end = k.warmupEnd.Add(cfg.Duration)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	smp := startSampler(r.actors, k.warmupEnd, cfg.SamplingTime)
	var prog *progress
	if cfg.Progress != nil {
		prog = startProgress(cfg, r.actors, k)
	}
	var wg sync.WaitGroup
	for _, a := range r.actors {
		wg.Go(func() {
			var err error
			switch {
			case a.kind == KindProducer:
				err = a.runProducer(runCtx, cfg, k)
			case a.kind == KindProducingConsumer:
				err = a.runProducingConsumer(runCtx, cfg, k)
			case a.partition < 0:
				err = a.runGroupConsumer(runCtx, cfg, k)
			default:
				err = a.runConsumer(runCtx, cfg, k)
			}
			if err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	series := smp.stop()
	if prog != nil {
		prog.stop()
	}
	if err := context.Cause(runCtx); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, err
	}
	return k, series, nil
}

// check compares what producers had confirmed with what the server
// reports it holds and what consumers read.
func (r *runner) check(ctx context.Context, c *Check) error {
	for _, u := range r.units {
		c.Sent += u.sent.Load()
		c.Received += u.received.Load()
	}
	// A cluster node answers from what it has applied, which may trail
	// the last acknowledged batch by a moment: read again for a while
	// until the counts reach what was sent.
	deadline := time.Now().Add(storedSettle)
	for {
		stored, err := r.stored(ctx)
		if err != nil {
			return err
		}
		c.Stored = stored
		if stored >= c.Sent || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := r.cfg.Scenario
	c.Exact = s.Consumes() && !(s == PinnedConsumer && r.cfg.Duration > 0)
	c.Retention = r.cfg.MaxTopicSize > 0
	c.evaluate(s.Consumes())
	return nil
}

// storedSettle bounds how long the accounting check waits for a
// cluster's counts to reach what producers had confirmed.
const storedSettle = 3 * time.Second

// stored is the message count of every benchmark stream.
func (r *runner) stored(ctx context.Context) (uint64, error) {
	var n uint64
	for _, st := range r.streams {
		sd, err := r.admin.GetStream(ctx, st.stream)
		if err != nil {
			return 0, fmt.Errorf("read stream %s: %w", st.name, err)
		}
		n += sd.MessagesCount
	}
	return n, nil
}

// cleanup deletes the benchmark streams from a server that outlives the
// run (best effort).
func (r *runner) cleanup(ctx context.Context) {
	for _, st := range r.streams {
		r.admin.DeleteStream(ctx, st.stream)
	}
}
