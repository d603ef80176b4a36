package bench

import (
	"slices"
	"time"
)

// samples are cumulative measured counters of every actor at each tick;
// tick 0 is the end of the warmup (all zero).
type samples struct {
	ticks    []time.Time
	msgs     [][]uint64 // [tick][actor]
	bytes    [][]uint64
	interval time.Duration
}

// sampler records the actors' counters every interval from the end of
// the warmup until stopped.
type sampler struct {
	s    samples
	quit chan struct{}
	done chan struct{}
}

func startSampler(actors []*actor, from time.Time, interval time.Duration) *sampler {
	sm := &sampler{s: samples{interval: interval}, quit: make(chan struct{}), done: make(chan struct{})}
	snap := func(t time.Time) {
		m, b := make([]uint64, len(actors)), make([]uint64, len(actors))
		for i, a := range actors {
			m[i], b[i] = a.msgs.Load(), a.bytes.Load()
		}
		sm.s.ticks = append(sm.s.ticks, t)
		sm.s.msgs = append(sm.s.msgs, m)
		sm.s.bytes = append(sm.s.bytes, b)
	}
	go func() {
		defer close(sm.done)
		// Nothing is counted before the warmup ends, so tick 0 is zero.
		zero := func() {
			sm.s.ticks = append(sm.s.ticks, from)
			sm.s.msgs = append(sm.s.msgs, make([]uint64, len(actors)))
			sm.s.bytes = append(sm.s.bytes, make([]uint64, len(actors)))
		}
		if d := time.Until(from); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-sm.quit:
				// The run ended during the warmup (an error), or right
				// at its end with the timer not yet seen.
				t.Stop()
				if now := time.Now(); now.After(from) {
					zero()
					snap(now)
				}
				return
			case <-t.C:
			}
		}
		zero()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-sm.quit:
				snap(time.Now())
				return
			case t := <-tk.C:
				snap(t)
			}
		}
	}()
	return sm
}

// stop takes the last sample and returns them all.
func (sm *sampler) stop() *samples {
	close(sm.quit)
	<-sm.done
	return &sm.s
}

// series returns the throughput series of the actors selected by keep
// (summed).
func (s *samples) series(keep func(i int) bool) Series {
	out := Series{IntervalMillis: float64(s.interval) / float64(time.Millisecond), MBps: []float64{}, MsgsPerS: []float64{}}
	total := func(row []uint64) (n uint64) {
		for i, v := range row {
			if keep(i) {
				n += v
			}
		}
		return n
	}
	for t := 1; t < len(s.ticks); t++ {
		dt := s.ticks[t].Sub(s.ticks[t-1]).Seconds()
		if dt <= 0 {
			continue
		}
		out.MBps = append(out.MBps, float64(total(s.bytes[t])-total(s.bytes[t-1]))/dt/MB)
		out.MsgsPerS = append(out.MsgsPerS, float64(total(s.msgs[t])-total(s.msgs[t-1]))/dt)
	}
	return out
}

// collect fills the per-actor and per-kind results.
func (r *runner) collect(res *Result, k *clock, smp *samples) {
	var lastAll time.Time
	byKind := map[ActorKind][]int{}
	var kinds []ActorKind
	for i, a := range r.actors {
		ar := Actor{
			Kind: a.kind, ID: a.id, Stream: a.st.name, Group: "",
			Messages: a.msgs.Load(), Batches: a.batches, PayloadBytes: a.bytes.Load(), WireBytes: a.wireBytes,
			TotalMessages: a.total.Load(),
			Latency:       Summarize(&a.lat), Histogram: &a.lat,
			Series: smp.series(func(j int) bool { return j == i }),
		}
		if a.partition >= 0 {
			p := uint32(a.partition)
			ar.Partition = &p
		} else if a.kind == KindConsumer {
			ar.Group = a.st.groupName
		}
		if a.trackAge {
			s := Summarize(&a.age)
			ar.Age, ar.AgeHistogram = &s, &a.age
		}
		if a.batches > 0 {
			ar.Seconds = a.last.Sub(a.first).Seconds()
			ar.MBps, ar.WireMBps, ar.MsgsPerS = rates(ar.PayloadBytes, ar.WireBytes, ar.Messages, ar.Seconds)
			if a.last.After(lastAll) {
				lastAll = a.last
			}
		}
		res.Actors = append(res.Actors, ar)
		if _, ok := byKind[a.kind]; !ok {
			kinds = append(kinds, a.kind)
		}
		byKind[a.kind] = append(byKind[a.kind], i)
	}
	if !lastAll.IsZero() {
		res.Seconds = lastAll.Sub(k.warmupEnd).Seconds()
	}
	for _, kind := range kinds {
		idx := byKind[kind]
		g := Group{Kind: kind, Actors: len(idx)}
		var lat, age Histogram
		var first, last time.Time
		ages := false
		for _, i := range idx {
			a, ar := r.actors[i], &res.Actors[i]
			g.Messages += ar.Messages
			g.Batches += ar.Batches
			g.PayloadBytes += ar.PayloadBytes
			g.WireBytes += ar.WireBytes
			lat.Merge(&a.lat)
			if a.trackAge {
				ages = true
				age.Merge(&a.age)
			}
			if a.batches > 0 {
				if first.IsZero() || a.first.Before(first) {
					first = a.first
				}
				if a.last.After(last) {
					last = a.last
				}
			}
		}
		if !first.IsZero() {
			g.Seconds = last.Sub(first).Seconds()
			g.MBps, g.WireMBps, g.MsgsPerS = rates(g.PayloadBytes, g.WireBytes, g.Messages, g.Seconds)
		}
		g.Latency = Summarize(&lat)
		if ages {
			s := Summarize(&age)
			g.Age = &s
		}
		g.Series = smp.series(func(j int) bool { return slices.Contains(idx, j) })
		res.Groups = append(res.Groups, g)
	}
}

func rates(payload, wire, msgs uint64, secs float64) (mbps, wmbps, mps float64) {
	if secs <= 0 {
		return 0, 0, 0
	}
	return float64(payload) / secs / MB, float64(wire) / secs / MB, float64(msgs) / secs
}
