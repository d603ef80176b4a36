package bench

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"text/tabwriter"
)

// runSuffix is the "_runN" ending of the result names bench/figures.sh
// gives the repetitions of one figure.
var runSuffix = regexp.MustCompile(`_run[0-9]+$`)

// WriteMedians writes one row per figure and kind of actor: results whose
// names differ only in a "_runN" suffix are repetitions of one figure, and
// each column is the median over them. Ratios are taken per run (to that
// run's own baselines) and then their median, so a run on a busier moment
// is compared with its own baseline.
func WriteMedians(w io.Writer, results []*Result) error {
	type key struct {
		figure string
		kind   ActorKind
	}
	var order []key
	rows := map[key][]struct {
		r *Result
		g Group
	}{}
	for _, r := range results {
		fig := runSuffix.ReplaceAllString(r.Name, "")
		for _, g := range r.Groups {
			k := key{fig, g.Kind}
			if _, ok := rows[k]; !ok {
				order = append(order, k)
			}
			rows[k] = append(rows[k], struct {
				r *Result
				g Group
			}{r, g})
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tactors\truns\tMB/s\tmsg/s\tp50 ms\tp90 ms\tp99 ms\tp90/p50\tloopback MB/s\t× loopback\tdisk MB/s\t× disk\tcache MB/s\t× cache\tserver CPU s/GB\tload\t")
	for _, k := range order {
		rs := rows[k]
		var mbps, mps, p50, p90, p99, spread, base, xl, disk, xd, cache, xc, cpu, load []float64
		for _, x := range rs {
			g := x.g
			mbps, mps = append(mbps, g.MBps), append(mps, g.MsgsPerS)
			p50, p90, p99 = append(p50, g.Latency.P50), append(p90, g.Latency.P90), append(p99, g.Latency.P99)
			if g.Latency.P50 > 0 {
				spread = append(spread, g.Latency.P90/g.Latency.P50)
			}
			if b := x.r.Baseline; b != nil && b.MBps > 0 {
				base, xl = append(base, b.MBps), append(xl, g.MBps/b.MBps)
			}
			if d := x.r.Disk; d != nil && d.MBps > 0 {
				disk = append(disk, d.MBps)
				if x.r.Params.EnforceFsync && g.Kind != KindConsumer {
					xd = append(xd, g.MBps/d.MBps)
				}
			}
			if c := x.r.Cache; c != nil && c.MBps > 0 {
				cache = append(cache, c.MBps)
				if !x.r.Params.EnforceFsync && g.Kind != KindConsumer {
					xc = append(xc, g.MBps/c.MBps)
				}
			}
			if c := x.r.CPU; c != nil && c.ServerPerGB > 0 {
				cpu = append(cpu, c.ServerPerGB)
			}
			load = append(load, max(x.r.Env.LoadBefore, x.r.Env.LoadAfter))
		}
		fmt.Fprintf(tw, "%s\t%d %ss\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			k.figure, rs[0].g.Actors, k.kind, len(rs), median(mbps, 1), median(mps, 0), median(p50, 3), median(p90, 3), median(p99, 3),
			median(spread, 2), median(base, 0), median(xl, 3), median(disk, 1), median(xd, 2), median(cache, 0), median(xc, 2), median(cpu, 2), loadRange(load))
	}
	return tw.Flush()
}

// median formats the median of v with the given decimals; "-" when empty.
func median(v []float64, decimals int) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%.*f", decimals, m)
}

// loadRange is "lo–hi" of the 1-minute load averages.
func loadRange(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f–%.1f", slices.Min(v), slices.Max(v))
}
