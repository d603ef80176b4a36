package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Describe is the one-line description of the workload.
func (r *Result) Describe() string {
	p := r.Params
	var actors []string
	if p.Producers > 0 {
		noun := "producers"
		if r.Scenario == EndToEndProducingConsumer {
			noun = "producing consumers"
		}
		actors = append(actors, fmt.Sprintf("%d %s", p.Producers, noun))
	}
	if p.Consumers > 0 {
		actors = append(actors, fmt.Sprintf("%d consumers", p.Consumers))
	}
	amount := fmt.Sprintf("%d batches each", p.MessageBatches)
	if p.DurationSeconds > 0 {
		amount = fmt.Sprintf("%gs", p.DurationSeconds)
	}
	fsync := "off"
	if p.EnforceFsync {
		fsync = "on"
	}
	s := fmt.Sprintf("%s: %s, %s × %s, batches of %d × %d-byte messages, %s, enforce_fsync %s",
		r.Scenario, strings.Join(actors, " and "), plural(p.Streams, "stream"), plural(p.Partitions, "partition"),
		p.MessagesPerBatch, p.MessageSize, amount, fsync)
	if p.WarmupSeconds > 0 {
		s += fmt.Sprintf(", warmup %gs", p.WarmupSeconds)
	}
	if p.RateLimit > 0 {
		s += fmt.Sprintf(", rate limit %.1f MB/s", float64(p.RateLimit)/MB)
	}
	return s
}

// WriteReport writes the human summary: the workload, the machine, the
// baseline, one row per actor and per kind, the latency distribution and
// the accounting check.
func WriteReport(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Describe())
	e := r.Env
	fmt.Fprintf(&b, "server %s over %s; %d CPUs (%s), GOMAXPROCS %d, %s, 1-min load %.2f before, %.2f after\n",
		r.Params.Server, r.Params.Transport+tlsNote(r.Params.TLS), e.CPUs, orUnknown(e.CPUModel), e.GOMAXPROCS, e.GoVersion, e.LoadBefore, e.LoadAfter)
	if bl := r.Baseline; bl != nil {
		fmt.Fprintf(&b, "loopback TCP baseline (one connection, %d KiB writes, %.1fs): %.1f MB/s\n", bl.BufferSize>>10, bl.Seconds, bl.MBps)
	}
	if d := r.Disk; d != nil {
		fmt.Fprintf(&b, "disk baseline (%d KiB writes each followed by %s, %.1fs, in %s): %.1f MB/s, %.2f ms per sync\n",
			DiskBufferSize>>10, d.Sync, d.Seconds, d.Dir, d.MBps, d.SyncMillis)
	}
	if c := r.Cache; c != nil {
		fmt.Fprintf(&b, "page-cache baseline (%d KiB writes without sync, %.1fs, in %s): %.1f MB/s\n",
			DiskBufferSize>>10, c.Seconds, c.Dir, c.MBps)
	}
	if f := r.Fill; f != nil {
		fmt.Fprintf(&b, "fill (not measured): %d messages in %.1fs\n", f.Messages, f.Seconds)
	}
	b.WriteString("\nthroughput (MB = 10^6 payload bytes) and per-batch latency in ms:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "actor\tstream\tmessages\tMB/s\tmsg/s\tp50\tp90\tp95\tp99\tp99.9\tmax\tavg batch\t")
	row := func(name, stream string, msgs uint64, mbps, mps float64, l Summary) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n",
			name, stream, msgs, mbps, mps, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max, l.Mean)
	}
	for _, a := range r.Actors {
		stream := a.Stream
		if a.Group != "" {
			stream += " (group)"
		}
		row(fmt.Sprintf("%s %d", a.Kind, a.ID), stream, a.Messages, a.MBps, a.MsgsPerS, a.Latency)
	}
	for _, g := range r.Groups {
		row(fmt.Sprintf("all %ss (%d)", g.Kind, g.Actors), "", g.Messages, g.MBps, g.MsgsPerS, g.Latency)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var aged []Group
	for _, g := range r.Groups {
		if g.Age != nil && g.Age.Count > 0 {
			aged = append(aged, g)
		}
	}
	if len(aged) > 0 {
		b.WriteString("\nmessage age at receipt (receive time − origin timestamp, µs clock) in ms:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "actors\tmessages\tp50\tp90\tp99\tp99.9\tmax\tmean\t")
		for _, g := range aged {
			a := g.Age
			fmt.Fprintf(tw, "all %ss\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", g.Kind, a.Count, a.P50, a.P90, a.P99, a.P999, a.Max, a.Mean)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, g := range r.Groups {
		if line := r.ratios(g); line != "" {
			fmt.Fprintf(&b, "\nall %ss: %s", g.Kind, line)
		}
	}
	if c := r.CPU; c != nil {
		b.WriteString("\nCPU during the measured phase: ")
		if r.Process != nil && !r.Process.Embedded && c.ServerSeconds > 0 {
			fmt.Fprintf(&b, "server (pid %d) %.2fs, %.2fs per GB; ", r.Process.PID, c.ServerSeconds, c.ServerPerGB)
		}
		what := "benchmark"
		if r.Process != nil && r.Process.Embedded {
			what = "benchmark with the embedded broker"
		}
		fmt.Fprintf(&b, "%s %.2fs, %.2fs per GB", what, c.BenchSeconds, c.BenchPerGB)
	}
	fmt.Fprintf(&b, "\n\nmeasured %.2fs; check: %s\n", r.Seconds, r.Check)
	_, err := io.WriteString(w, b.String())
	return err
}

// ratios describes group g's MB/s against the baselines of the run.
func (r *Result) ratios(g Group) string {
	var parts []string
	if r.Baseline != nil && r.Baseline.MBps > 0 {
		parts = append(parts, fmt.Sprintf("%.2f × loopback", g.MBps/r.Baseline.MBps))
	}
	if r.Disk != nil && r.Disk.MBps > 0 && r.Params.EnforceFsync && g.Kind != KindConsumer {
		parts = append(parts, fmt.Sprintf("%.2f × disk", g.MBps/r.Disk.MBps))
	}
	if r.Cache != nil && r.Cache.MBps > 0 && !r.Params.EnforceFsync && g.Kind != KindConsumer {
		parts = append(parts, fmt.Sprintf("%.2f × page cache", g.MBps/r.Cache.MBps))
	}
	if len(parts) > 0 && g.Latency.P50 > 0 {
		parts = append(parts, fmt.Sprintf("batch p90/p50 %.2f", g.Latency.P90/g.Latency.P50))
	}
	return strings.Join(parts, ", ")
}

// plural is "1 stream", "2 streams".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func tlsNote(on bool) string {
	if on {
		return "+tls"
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "model unknown"
	}
	return s
}

// WriteComparison writes one row per result and kind of actor: the
// figures to compare runs (MB/s, msg/s, batch latency p50/p99/p99.9) with
// the loopback baseline and the load of the machine at the time.
func WriteComparison(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "name\tscenario\tfsync\tactors\tMB/s\tmsg/s\tp50 ms\tp90 ms\tp99 ms\tp99.9 ms\tbaseline MB/s\t× loopback\tdisk MB/s\t× disk\tcache MB/s\t× cache\tserver CPU s/GB\tload\tcheck\t")
	for _, r := range results {
		base, disk, cache := "-", "-", "-"
		if r.Baseline != nil {
			base = fmt.Sprintf("%.0f", r.Baseline.MBps)
		}
		if r.Disk != nil {
			disk = fmt.Sprintf("%.0f", r.Disk.MBps)
		}
		if r.Cache != nil {
			cache = fmt.Sprintf("%.0f", r.Cache.MBps)
		}
		cpu := "-"
		if r.CPU != nil && r.CPU.ServerPerGB > 0 {
			cpu = fmt.Sprintf("%.2f", r.CPU.ServerPerGB)
		}
		check := "ok"
		if !r.Check.OK {
			check = "MISMATCH"
		}
		for _, g := range r.Groups {
			xl, xd, xc := "-", "-", "-"
			if r.Baseline != nil && r.Baseline.MBps > 0 {
				xl = fmt.Sprintf("%.2f", g.MBps/r.Baseline.MBps)
			}
			if r.Disk != nil && r.Disk.MBps > 0 && r.Params.EnforceFsync && g.Kind != KindConsumer {
				xd = fmt.Sprintf("%.2f", g.MBps/r.Disk.MBps)
			}
			if r.Cache != nil && r.Cache.MBps > 0 && !r.Params.EnforceFsync && g.Kind != KindConsumer {
				xc = fmt.Sprintf("%.2f", g.MBps/r.Cache.MBps)
			}
			fmt.Fprintf(tw, "%s\t%s\t%v\t%d %ss\t%.1f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t\n",
				r.Name, r.Scenario, r.Params.EnforceFsync, g.Actors, g.Kind, g.MBps, g.MsgsPerS,
				g.Latency.P50, g.Latency.P90, g.Latency.P99, g.Latency.P999, base, xl, disk, xd, cache, xc, cpu, max(r.Env.LoadBefore, r.Env.LoadAfter), check)
		}
	}
	return tw.Flush()
}
