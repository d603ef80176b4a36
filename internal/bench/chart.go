package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// The chart is one self-contained HTML file (no script, no external
// resource): the workload, the summary table, throughput over time, the
// latency percentile curves, and each kind's throughput next to the
// loopback baseline, as inline SVG.

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// maxActorLines is the most per-actor lines in a chart; beyond it only
// the per-kind lines are drawn.
const maxActorLines = 16

const chartCSS = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 6px}
.meta{color:#555}table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}th{background:#f4f4f4}
td:first-child,th:first-child{text-align:left}tr.sum td{font-weight:600;background:#fafafa}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
svg text{font:12px system-ui,sans-serif;fill:#333}.ok{color:#2a7a2a}.bad{color:#b00}`

// WriteHTML writes the chart page of r.
func WriteHTML(w io.Writer, r *Result) error {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iggo bench: %s</title><style>%s</style></head><body>\n", esc(r.Name), chartCSS)
	fmt.Fprintf(&b, "<h1>iggo bench — %s</h1>\n<p class=\"meta\">%s<br>", esc(string(r.Scenario)), esc(r.Describe()))
	e := r.Env
	fmt.Fprintf(&b, "%s, server %s over %s; %d CPUs (%s), %s; 1-min load %.2f before, %.2f after; started %s</p>\n",
		esc(r.Name), esc(r.Params.Server), esc(r.Params.Transport+tlsNote(r.Params.TLS)), e.CPUs, esc(orUnknown(e.CPUModel)),
		esc(e.GoVersion), e.LoadBefore, e.LoadAfter, r.StartedAt.Format("2006-01-02 15:04:05 MST"))
	cls := "ok"
	if !r.Check.OK {
		cls = "bad"
	}
	fmt.Fprintf(&b, "<p>Measured %.2f s. Check: <span class=\"%s\">%s</span></p>\n", r.Seconds, cls, esc(r.Check.String()))

	b.WriteString("<h2>Summary</h2>\n<table><tr><th>actor</th><th>stream</th><th>messages</th><th>MB/s</th><th>msg/s</th><th>p50 ms</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>avg batch</th></tr>\n")
	row := func(class, name, stream string, msgs uint64, mbps, mps float64, l Summary) {
		fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>%d</td><td>%.1f</td><td>%.0f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td></tr>\n",
			class, esc(name), esc(stream), msgs, mbps, mps, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max, l.Mean)
	}
	for _, a := range r.Actors {
		row("", fmt.Sprintf("%s %d", a.Kind, a.ID), a.Stream, a.Messages, a.MBps, a.MsgsPerS, a.Latency)
	}
	for _, g := range r.Groups {
		row("sum", fmt.Sprintf("all %ss (%d)", g.Kind, g.Actors), "", g.Messages, g.MBps, g.MsgsPerS, g.Latency)
	}
	b.WriteString("</table>\n<p class=\"meta\">MB = 10<sup>6</sup> payload bytes. Latency is per batch: the time one send (or one PollMessages that returned messages, or for producing consumers a send and the polls reading it back) took.</p>\n")

	b.WriteString("<h2>Throughput over time</h2>\n")
	throughputChart(&b, r)
	b.WriteString("<h2>Latency by percentile</h2>\n")
	latencyChart(&b, r)
	b.WriteString("<h2>Throughput against the baselines</h2>\n")
	baselineChart(&b, r)
	if len(r.Resources) > 0 {
		b.WriteString("<h2>Broker process over time</h2>\n")
		resourcesChart(&b, r)
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// line is one curve of a chart.
type line struct {
	label string
	color string
	width float64
	pts   [][2]float64
}

// plot maps data to an SVG area with axes.
type plot struct {
	w, h                   float64
	left, right, top, bot  float64
	xmin, xmax, ymin, ymax float64
}

func (p *plot) x(v float64) float64 {
	return p.left + (v-p.xmin)/(p.xmax-p.xmin)*(p.w-p.left-p.right)
}

func (p *plot) y(v float64) float64 {
	return p.h - p.bot - (v-p.ymin)/(p.ymax-p.ymin)*(p.h-p.top-p.bot)
}

// tick is an axis mark.
type tick struct {
	at    float64
	label string
}

// niceTicks returns about n round ticks from 0 to hi.
func niceTicks(hi float64, n int) []tick {
	if hi <= 0 {
		hi = 1
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	// Enough decimals to tell the ticks apart (2.5 × 10^k needs one more).
	decimals := max(0, 1-int(math.Floor(math.Log10(step))))
	var ts []tick
	for i := 0; ; i++ {
		v := float64(i) * step
		ts = append(ts, tick{v, trimFloat(v, decimals)})
		if v >= hi*0.9999 {
			break
		}
	}
	return ts
}

// trimFloat formats v with at most decimals digits after the point,
// without trailing zeros.
func trimFloat(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// draw writes the SVG: grid, ticks, axis labels and lines.
func (p *plot) draw(b *strings.Builder, xt, yt []tick, xlabel, ylabel string, lines []line) {
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", p.w, p.h, p.w, p.h)
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" stroke=\"#999\"/>\n", p.left, p.top, p.w-p.left-p.right, p.h-p.top-p.bot)
	for _, t := range yt {
		y := p.y(t.at)
		fmt.Fprintf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			p.left, p.w-p.right, y, y, p.left-6, y+4, html.EscapeString(t.label))
	}
	for _, t := range xt {
		x := p.x(t.at)
		fmt.Fprintf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x, x, p.top, p.h-p.bot, x, p.h-p.bot+16, html.EscapeString(t.label))
	}
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", p.left+(p.w-p.left-p.right)/2, p.h-6, html.EscapeString(xlabel))
	fmt.Fprintf(b, "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", p.top+(p.h-p.top-p.bot)/2, html.EscapeString(ylabel))
	for _, l := range lines {
		if len(l.pts) == 0 {
			continue
		}
		var pts strings.Builder
		for _, pt := range l.pts {
			fmt.Fprintf(&pts, "%.1f,%.1f ", p.x(pt[0]), p.y(pt[1]))
		}
		fmt.Fprintf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" stroke-linejoin=\"round\" points=\"%s\"><title>%s</title></polyline>\n",
			l.color, l.width, strings.TrimSpace(pts.String()), html.EscapeString(l.label))
	}
	b.WriteString("</svg>\n<div class=\"legend\">")
	for _, l := range lines {
		fmt.Fprintf(b, "<span><i style=\"background:%s\"></i>%s</span>", l.color, html.EscapeString(l.label))
	}
	b.WriteString("</div>\n")
}

func newPlot() *plot {
	return &plot{w: 960, h: 360, left: 64, right: 20, top: 12, bot: 44}
}

// throughputChart draws MB/s over time per actor (when few) and per kind.
func throughputChart(b *strings.Builder, r *Result) {
	var lines []line
	add := func(label string, s Series, width float64) {
		l := line{label: label, color: palette[len(lines)%len(palette)], width: width}
		for i, v := range s.MBps {
			l.pts = append(l.pts, [2]float64{float64(i+1) * s.IntervalMillis / 1000, v})
		}
		lines = append(lines, l)
	}
	if len(r.Actors) <= maxActorLines && len(r.Actors) > 1 {
		for _, a := range r.Actors {
			add(fmt.Sprintf("%s %d", a.Kind, a.ID), a.Series, 1.2)
		}
	}
	for _, g := range r.Groups {
		add(fmt.Sprintf("all %ss", g.Kind), g.Series, 2.5)
	}
	drawTimeSeries(b, "MB/s", lines)
}

// drawTimeSeries draws lines over "seconds after warmup", both axes scaled
// to the largest point and rounded up to a tick.
func drawTimeSeries(b *strings.Builder, ylabel string, lines []line) {
	p := newPlot()
	for _, l := range lines {
		for _, pt := range l.pts {
			p.xmax, p.ymax = max(p.xmax, pt[0]), max(p.ymax, pt[1])
		}
	}
	yt := niceTicks(p.ymax, 6)
	p.ymax = yt[len(yt)-1].at
	xt := niceTicks(p.xmax, 10)
	p.xmax = xt[len(xt)-1].at
	p.draw(b, xt, yt, "seconds after warmup", ylabel, lines)
}

// percentileX maps a fraction q to the HdrHistogram plot axis
// -log10(1-q): 90 % at 1, 99 % at 2, 99.9 % at 3.
func percentileX(q float64) float64 { return -math.Log10(1 - q) }

// latencyChart draws latency against percentile (log scale of 1-q) for
// each kind, and each actor when few.
func latencyChart(b *strings.Builder, r *Result) {
	var lines []line
	add := func(label string, h *Histogram, width float64) {
		if h == nil || h.Count() == 0 {
			return
		}
		l := line{label: label, color: palette[len(lines)%len(palette)], width: width}
		top := 1 - 1/float64(h.Count()*10) // keep the top of the curve finite
		prev := 0.0
		l.pts = append(l.pts, [2]float64{0, ms(h.Min())})
		for _, pt := range h.Distribution() {
			q := min(pt.Fraction, top)
			x := percentileX(q)
			// A step: the value holds up to its cumulative fraction.
			l.pts = append(l.pts, [2]float64{prev, ms(pt.Value)}, [2]float64{x, ms(pt.Value)})
			prev = x
		}
		lines = append(lines, l)
	}
	byKind := map[ActorKind]*Histogram{}
	for i := range r.Actors {
		a := &r.Actors[i]
		if byKind[a.Kind] == nil {
			byKind[a.Kind] = &Histogram{}
		}
		byKind[a.Kind].Merge(a.Histogram)
	}
	if len(r.Actors) <= maxActorLines && len(r.Actors) > 1 {
		for i := range r.Actors {
			a := &r.Actors[i]
			add(fmt.Sprintf("%s %d", a.Kind, a.ID), a.Histogram, 1.2)
		}
	}
	for _, g := range r.Groups {
		add(fmt.Sprintf("all %ss", g.Kind), byKind[g.Kind], 2.5)
	}
	p := newPlot()
	p.xmax, p.ymax = 1, 0
	for _, l := range lines {
		for _, pt := range l.pts {
			p.xmax, p.ymax = max(p.xmax, pt[0]), max(p.ymax, pt[1])
		}
	}
	p.xmax = math.Ceil(p.xmax)
	var xt []tick
	for i := 0; float64(i) <= p.xmax; i++ {
		label := "0%"
		if i > 0 {
			label = trimFloat(100*(1-math.Pow(10, -float64(i))), i) + "%"
		}
		xt = append(xt, tick{float64(i), label})
	}
	yt := niceTicks(p.ymax, 6)
	p.ymax = yt[len(yt)-1].at
	p.draw(b, xt, yt, "percentile (log scale of 1 − q)", "batch latency, ms", lines)
}

// baselineChart draws each kind's MB/s as a bar next to the loopback TCP
// figure of the same machine.
func baselineChart(b *strings.Builder, r *Result) {
	type bar struct {
		label string
		v     float64
		color string
	}
	var bars []bar
	for i, g := range r.Groups {
		bars = append(bars, bar{fmt.Sprintf("all %ss (payload)", g.Kind), g.MBps, palette[i%len(palette)]})
		bars = append(bars, bar{fmt.Sprintf("all %ss (wire)", g.Kind), g.WireMBps, palette[i%len(palette)] + "99"})
	}
	if r.Baseline != nil {
		bars = append(bars, bar{"loopback TCP, one connection", r.Baseline.MBps, "#444"})
	} else {
		b.WriteString("<p class=\"meta\">No baseline was measured (--baseline 0).</p>\n")
	}
	if r.Disk != nil {
		bars = append(bars, bar{"disk: 1 MiB write + " + r.Disk.Sync, r.Disk.MBps, "#888"})
	}
	if r.Cache != nil {
		bars = append(bars, bar{"page cache: 1 MiB write, no sync", r.Cache.MBps, "#aaa"})
	}
	hi := 1e-9
	for _, x := range bars {
		hi = max(hi, x.v)
	}
	const left, width, rowH = 240.0, 600.0, 26.0
	h := float64(len(bars))*rowH + 10
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"%.0f\" viewBox=\"0 0 960 %.0f\">\n", h, h)
	for i, x := range bars {
		y := 5 + float64(i)*rowH
		wv := x.v / hi * width
		fmt.Fprintf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text><rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%.1f MB/s</text>\n",
			left-8, y+15, html.EscapeString(x.label), left, y+3, wv, rowH-8, x.color, left+wv+6, y+15, x.v)
	}
	b.WriteString("</svg>\n")
}

// resourcesChart draws the samples of the broker's process: memory (RSS,
// and the Go heap when embedded) in MiB, and counts (open files, threads,
// goroutines when embedded), each over time.
func resourcesChart(b *strings.Builder, r *Result) {
	series := func(label, color string, f func(ResourceSample) float64) line {
		l := line{label: label, color: color, width: 2}
		for _, s := range r.Resources {
			l.pts = append(l.pts, [2]float64{s.Seconds, f(s)})
		}
		return l
	}
	embedded := r.Process != nil && r.Process.Embedded
	mem := []line{series("RSS, MiB", palette[0], func(s ResourceSample) float64 { return float64(s.RSS) / (1 << 20) })}
	counts := []line{
		series("open files", palette[2], func(s ResourceSample) float64 { return float64(s.OpenFiles) }),
		series("threads", palette[4], func(s ResourceSample) float64 { return float64(s.Threads) }),
	}
	if embedded {
		mem = append(mem, series("Go heap in use, MiB", palette[1], func(s ResourceSample) float64 { return float64(s.HeapBytes) / (1 << 20) }))
		counts = append(counts, series("goroutines", palette[3], func(s ResourceSample) float64 { return float64(s.Goroutines) }))
	}
	for _, c := range []struct {
		ylabel string
		lines  []line
	}{{"MiB", mem}, {"count", counts}} {
		drawTimeSeries(b, c.ylabel, c.lines)
	}
	if embedded {
		b.WriteString("<p class=\"meta\">The broker is embedded: the process, its heap and goroutines include the benchmark's own actors (a fixed number).</p>\n")
	}
}
