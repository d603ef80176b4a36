package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

const (
	// progressANSIPeriod is the redraw period of the terminal bars.
	progressANSIPeriod = 250 * time.Millisecond
	// progressLinePeriod is the period of the plain progress lines.
	progressLinePeriod = time.Second
	// maxBars is the most per-actor bars; beyond, one bar per kind.
	maxBars  = 16
	barWidth = 30
)

// progress draws live progress: on a terminal one bar per actor (or per
// kind), redrawn in place; otherwise one line per second.
type progress struct {
	w      io.Writer
	ansi   bool
	actors []*actor
	k      *clock
	cfg    *Config
	lines  int
	prev   []uint64 // payload bytes per row at the previous draw
	prevT  time.Time
	quit   chan struct{}
	done   chan struct{}
}

// row is one bar: a set of actors.
type row struct {
	label  string
	actors []*actor
}

func startProgress(cfg *Config, actors []*actor, k *clock) *progress {
	p := &progress{w: cfg.Progress, ansi: cfg.ProgressANSI, actors: actors, k: k, cfg: cfg,
		quit: make(chan struct{}), done: make(chan struct{}), prevT: time.Now()}
	period := progressLinePeriod
	if p.ansi {
		period = progressANSIPeriod
	}
	go func() {
		defer close(p.done)
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-p.quit:
				p.draw(true)
				return
			case <-tk.C:
				p.draw(false)
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	close(p.quit)
	<-p.done
}

func (p *progress) rows() []row {
	if !p.ansi || len(p.actors) > maxBars {
		var rows []row
		idx := map[ActorKind]int{}
		for _, a := range p.actors {
			i, ok := idx[a.kind]
			if !ok {
				i = len(rows)
				idx[a.kind] = i
				rows = append(rows, row{label: string(a.kind) + "s"})
			}
			rows[i].actors = append(rows[i].actors, a)
		}
		return rows
	}
	rows := make([]row, len(p.actors))
	for i, a := range p.actors {
		rows[i] = row{label: fmt.Sprintf("%s %d", a.kind, a.id), actors: []*actor{a}}
	}
	return rows
}

// fraction is how far a row is: by count, or by time under --duration.
func (p *progress) fraction(r row, now time.Time) float64 {
	if !p.k.end.IsZero() {
		total := p.k.end.Sub(p.k.warmupEnd).Seconds()
		return min(max(now.Sub(p.k.warmupEnd).Seconds()/total, 0), 1)
	}
	var got, want uint64
	for _, a := range r.actors {
		got += a.msgs.Load()
		if a.kind == KindConsumer && !a.fill {
			// A consumer next to producers owes what they send.
			want += p.cfg.MessageBatches * uint64(p.cfg.MessagesPerBatch)
		} else if a.fill {
			want += a.u.sent.Load() / uint64(max(1, countOn(p.actors, a)))
		} else {
			want += a.target * uint64(p.cfg.MessagesPerBatch)
		}
	}
	if want == 0 {
		return 0
	}
	return min(float64(got)/float64(want), 1)
}

// countOn is the number of consumers sharing a's stream.
func countOn(actors []*actor, a *actor) int {
	n := 0
	for _, b := range actors {
		if b.kind == a.kind && b.st == a.st {
			n++
		}
	}
	return n
}

func (p *progress) draw(final bool) {
	now := time.Now()
	rows := p.rows()
	if p.prev == nil {
		p.prev = make([]uint64, len(rows))
	}
	dt := now.Sub(p.prevT).Seconds()
	var b strings.Builder
	if p.ansi && p.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.lines)
	}
	warming := now.Before(p.k.warmupEnd)
	for i, r := range rows {
		var bytes uint64
		for _, a := range r.actors {
			bytes += a.bytes.Load()
		}
		rate := 0.0
		if dt > 0 {
			rate = float64(bytes-p.prev[i]) / dt / MB
		}
		p.prev[i] = bytes
		f := p.fraction(r, now)
		state := fmt.Sprintf("%5.1f%%  %9.1f MB/s", f*100, rate)
		if warming {
			state = "warming up"
		}
		if p.ansi {
			fill := int(f * barWidth)
			fmt.Fprintf(&b, "\x1b[2K%-22s [%s%s] %s\n", r.label, strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), state)
		} else {
			if i == 0 {
				fmt.Fprintf(&b, "%7.1fs", now.Sub(p.k.warmupEnd).Seconds())
			}
			fmt.Fprintf(&b, "  %s %s", r.label, state)
		}
	}
	if !p.ansi {
		if final {
			return
		}
		b.WriteByte('\n')
	}
	p.lines = len(rows)
	p.prevT = now
	io.WriteString(p.w, b.String())
}
