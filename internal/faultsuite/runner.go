//go:build !windows

package faultsuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"time"

	"github.com/iggo-dev/iggo/client"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// Config describes one run of the suite.
type Config struct {
	// Profile names the run ("ci", "long") in the summary.
	Profile string
	// Seed drives the fault schedule (and the corruption victims and
	// positions, the workers' random choices, the lab's addresses).
	Seed uint64
	// Bin is the iggo binary; Dir a directory for the nodes.
	Bin, Dir string
	// Nodes and Partitions size the cluster and the topic (replication
	// factor 3).
	Nodes      int
	Partitions uint32
	// Duration bounds the fault phase; Steps is how many steps the
	// schedule holds (the run stops at whichever ends first).
	Duration time.Duration
	Steps    int
	// Hold and Gap bound each step's fault and quiet time.
	MinHold, MaxHold, MinGap, MaxGap time.Duration
	// Kinds are the fault kinds to draw from.
	Kinds []FaultKind
	// Members is the number of consumer-group members.
	Members int
	// RepairWait bounds the wait, after healing, for every replica to
	// catch up (corrupt replicas to be repaired).
	RepairWait time.Duration
	// Checker tunes the checker.
	Checker CheckerConfig
	// NoNetns keeps the nodes on loopback, without network partitions.
	NoNetns bool
	// Logf receives progress lines.
	Logf func(format string, args ...any)
}

// Result is what a run found.
type Result struct {
	Schedule  Schedule
	StepsRun  int
	Faults    map[string]int
	Ops       []Op
	Final     map[uint32]FinalLog
	Anomalies []Anomaly
	// NemesisErrors are faults that could not be injected or healed.
	NemesisErrors []string
	// NetReason says why network partitions were skipped ("" when run).
	NetReason string
	// ReplicatedIn is how long after healing every partition had a
	// leader and all its replicas caught up; Unreplicated says what was
	// still missing when that did not happen within RepairWait.
	ReplicatedIn time.Duration
	Unreplicated string
	// NodesDown are the nodes not running at the end (they exited on
	// their own after the final heal started them), with how they ended.
	NodesDown []string
	// NodeErrors are the ERROR lines of each node's log.
	NodeErrors map[int][]string
	Elapsed    time.Duration
	// Cluster gives access to node logs for reports.
	logTail func(i, n int) string
}

// Run runs the suite once: cluster up, workload, seeded faults, heal,
// final reads, check.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6c6162))
	res := &Result{}
	var lab *netLab
	err := errors.New("turned off by the configuration")
	if !cfg.NoNetns {
		lab, err = newNetLab(cfg.Nodes, rng)
	}
	if err != nil {
		res.NetReason = err.Error()
		logf("network partitions skipped: %v", err)
	} else {
		defer lab.Close()
	}
	res.Schedule = newSchedule(cfg.Seed, scheduleParams{nodes: cfg.Nodes, kinds: cfg.Kinds, steps: cfg.Steps,
		minHold: cfg.MinHold, maxHold: cfg.MaxHold, minGap: cfg.MinGap, maxGap: cfg.MaxGap, netFault: lab != nil})
	logf("%s", res.Schedule)

	c, err := newCluster(cfg.Bin, cfg.Dir, cfg.Nodes, lab, rng, logf)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res.logTail = c.Tail
	for i := range cfg.Nodes {
		if err := c.Start(i); err != nil {
			return nil, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	_, _, err = local.WaitReady(rctx, c.Addrs(), 200*time.Millisecond)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cluster not ready: %w", err)
	}
	if err := setup(ctx, c, cfg); err != nil {
		return nil, err
	}
	logf("cluster of %d nodes ready, topic of %d partitions created (%v)", cfg.Nodes, cfg.Partitions, time.Since(start).Round(time.Millisecond))

	hist := NewHistory()
	w := newWorkload(c.Addrs, hist, cfg.Partitions, cfg.Seed)
	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	for p := range cfg.Partitions {
		w.Producer(wctx, p)
		w.Reader(wctx, p)
	}
	for range cfg.Members {
		w.Member(wctx)
	}

	nem := newNemesis(c, logf)
	fctx, cancelFaults := context.WithTimeout(ctx, cfg.Duration)
	hold(fctx, 2*time.Second) // some history before the first fault
	res.StepsRun = nem.Run(fctx, res.Schedule)
	cancelFaults()

	logf("healing: %d steps run", res.StepsRun)
	if err := nem.Heal(context.Background()); err != nil {
		nem.fail("final heal: %v", err)
	}
	if err := settle(ctx, c, w, logf); err != nil {
		nem.fail("settle: %v", err)
	}
	res.ReplicatedIn, res.Unreplicated = nem.Replication(ctx, cfg.RepairWait)
	for i := range cfg.Nodes {
		if !c.Running(i) {
			res.NodesDown = append(res.NodesDown, fmt.Sprintf("node %d: %s%s", i, c.exitReason(i), c.crashLine(i)))
		}
	}
	if res.Unreplicated != "" {
		logf("not every replica caught up %v after healing: %s", cfg.RepairWait, res.Unreplicated)
	}
	stopWork()
	w.Wait()
	res.Final = finalReads(ctx, w, hist, logf)
	res.Ops = hist.Ops()
	res.Faults = nem.Counts()
	res.NemesisErrors = nem.Errors()
	res.Anomalies = Check(res.Ops, res.Final, cfg.Checker)
	res.NodeErrors = map[int][]string{}
	for i := range cfg.Nodes {
		res.NodeErrors[i] = c.ErrorLines(i)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// setup creates the stream, the topic (replication factor 3) and the
// consumer group, retrying while the cluster settles.
func setup(ctx context.Context, c *cluster, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cl, err := (&workload{addrs: c.Addrs}).dial(ctx)
	if err != nil {
		return fmt.Errorf("connect for setup: %w", err)
	}
	defer cl.Close()
	s, t := wire.NamedID(streamName), wire.NamedID(topicName)
	steps := []func() error{
		func() error { _, err := cl.CreateStream(ctx, streamName); return err },
		func() error {
			_, err := cl.CreateTopic(ctx, s, topicName, cfg.Partitions, wire.Uint8Option(wire.TopicOptReplicationFactor, 3))
			return err
		},
		func() error { _, err := cl.CreateConsumerGroup(ctx, s, t, groupName); return err },
	}
	for _, f := range steps {
		for {
			err := f()
			if err == nil || errors.Is(err, wire.ErrStreamNameAlreadyExists) || errors.Is(err, wire.ErrTopicNameAlreadyExists) ||
				errors.Is(err, wire.ErrConsumerGroupNameAlreadyExists) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("setup: %w", err)
			}
			hold(ctx, 500*time.Millisecond)
		}
	}
	return nil
}

// settle waits until the cluster has a leader and every partition takes
// a write and answers a poll (the probe writes are recorded and checked
// like the others).
func settle(ctx context.Context, c *cluster, w *workload, logf func(string, ...any)) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	if _, err := c.WaitLeader(ctx); err != nil {
		return fmt.Errorf("no leader after healing: %w", err)
	}
	cl, err := w.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	me := w.clientNumber()
	seq := uint64(0)
	for p := range w.partitions {
		for {
			seq++
			id := payloadID(me, seq)
			op := Op{Client: me, Kind: KindSend, Partition: p, PayloadID: id}
			w.hist.Begin(&op)
			octx, cancelOp := context.WithTimeout(ctx, opTimeout)
			conf, err := cl.SendMessages(octx, w.stream, w.topic, wire.PartitioningByID(p), []wire.Message{{ID: wire.Uint128{Lo: id}, Payload: payloadFor(id)}})
			cancelOp()
			if err == nil && len(conf) > 0 {
				op.Offset, op.HasOffset = conf[0].BaseOffset, true
			}
			w.hist.Finish(op, classify(err), err)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("partition %d takes no write after healing: %w", p, err)
			}
			hold(ctx, 500*time.Millisecond)
		}
	}
	logf("cluster settled in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// finalReads reads every partition whole, from offset 0, through the
// cluster (the SDK routes to each partition's leader).
func finalReads(ctx context.Context, w *workload, hist *History, logf func(string, ...any)) map[uint32]FinalLog {
	out := map[uint32]FinalLog{}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl, err := w.dial(dctx)
	if err != nil {
		for p := range w.partitions {
			out[p] = FinalLog{Err: "connect: " + err.Error()}
		}
		return out
	}
	defer cl.Close()
	me := w.clientNumber()
	consumer := wire.SingleConsumer(wire.NamedID("final"))
	for p := range w.partitions {
		fl := finalRead(ctx, cl, w, hist, me, consumer, p)
		logf("final read of partition %d: %d messages%s", p, len(fl.Records), map[bool]string{true: ", error: " + fl.Err, false: ""}[fl.Err != ""])
		out[p] = fl
	}
	return out
}

// finalReadTimeout bounds the final read of one partition.
const finalReadTimeout = 60 * time.Second

// finalRead reads partition p whole, from offset 0, retrying failed polls
// for up to finalReadTimeout.
func finalRead(ctx context.Context, cl *client.Client, w *workload, hist *History, me int, consumer wire.Consumer, p uint32) FinalLog {
	ctx, cancel := context.WithTimeout(ctx, finalReadTimeout)
	defer cancel()
	var fl FinalLog
	var next uint64
	empties := 0
	for {
		op := Op{Client: me, Kind: KindFinal, Partition: p, Offset: next}
		hist.Begin(&op)
		octx, cancelOp := context.WithTimeout(ctx, opTimeout)
		r, err := cl.PollMessages(octx, wire.PollMessages{Consumer: consumer, StreamID: w.stream, TopicID: w.topic,
			Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(next), Count: 1000})
		cancelOp()
		if err != nil {
			hist.Finish(op, classify(err), err)
			if ctx.Err() != nil {
				fl.Err = fmt.Sprintf("poll at offset %d: %v", next, err)
				break
			}
			hold(ctx, 500*time.Millisecond)
			continue
		}
		recs := records(r)
		hist.Finish(op, TypeOK, nil) // records kept in the final log, not twice
		if len(recs) == 0 {
			if next > r.CurrentOffset || (next == 0 && r.CurrentOffset == 0 && empties >= 3) {
				break
			}
			if empties++; empties >= 10 {
				fl.Err = fmt.Sprintf("poll at offset %d returns nothing though the partition's current offset is %d", next, r.CurrentOffset)
				break
			}
			hold(ctx, 300*time.Millisecond)
			continue
		}
		empties = 0
		fl.Records = append(fl.Records, recs...)
		next = recs[len(recs)-1].Offset + 1
	}
	return fl
}

// LogTail returns the last n lines of node i's log.
func (r *Result) LogTail(i, n int) string {
	if r.logTail == nil {
		return ""
	}
	return r.logTail(i, n)
}

// WriteSummary writes the summary to path.
func (r *Result) WriteSummary(path string, cfg Config) error {
	if err := os.WriteFile(path, []byte(r.Summary(cfg)), 0o644); err != nil {
		return fmt.Errorf("write the summary: %w", err)
	}
	return nil
}

// WriteHistory writes the run's operations as JSON lines.
func (r *Result) WriteHistory(f *os.File) error {
	h := &History{ops: r.Ops}
	return h.WriteJSON(f)
}
