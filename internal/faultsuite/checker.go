//go:build !windows

package faultsuite

import (
	"fmt"
	"slices"
	"sort"
)

// Anomaly kinds the checker reports.
const (
	AnomalyLost          = "lost-ack-write"    // an acknowledged send is not at its offset (or nowhere) in the final log
	AnomalyWrongPayload  = "wrong-payload"     // a message whose payload or id is not what was sent
	AnomalyDuplicate     = "duplicate"         // one payload id at two offsets
	AnomalyFinalGap      = "final-gap"         // the final log skips offsets
	AnomalyReordered     = "reordered"         // a producer's sequential sends stored out of order
	AnomalyFailedVisible = "failed-visible"    // a send refused with a definite error is in the final log
	AnomalyPollSkip      = "poll-skip"         // a poll returned non-contiguous offsets or started past the offset asked
	AnomalyPollBackward  = "poll-backward"     // a poll returned offsets before the one asked
	AnomalyDivergentRead = "divergent-read"    // a poll returned a message the final log does not hold at that offset
	AnomalyOffsetBack    = "offset-backward"   // a stored consumer offset read back lower than an acknowledged store before it
	AnomalyDoubleAssign  = "double-assignment" // one partition assigned to two group members at once
	AnomalyUnreadable    = "final-unreadable"  // a partition could not be read whole after healing
)

// anomalyKinds lists every anomaly kind in the summary's order.
func anomalyKinds() []string {
	return []string{AnomalyLost, AnomalyWrongPayload, AnomalyDuplicate, AnomalyFinalGap, AnomalyReordered, AnomalyFailedVisible,
		AnomalyPollSkip, AnomalyPollBackward, AnomalyDivergentRead, AnomalyOffsetBack, AnomalyDoubleAssign, AnomalyUnreadable}
}

// Anomaly is one violation found in a history.
type Anomaly struct {
	Kind   string
	Detail string
	// Ops are the indexes of the operations involved.
	Ops []int
}

// FinalLog is a partition's content after healing: its records in offset
// order, and whether it could be read whole.
type FinalLog struct {
	Records []Record
	Err     string
}

// CheckerConfig tunes the checker.
type CheckerConfig struct {
	// GroupTolerance is how far two members' ownership intervals of one
	// partition may overlap without an anomaly: an ownership interval is
	// only the span the server certainly gave the member the partition
	// (from the answer of one sync to the request of a later one of the
	// same generation), so 0 is exact; a small value absorbs clock
	// granularity.
	GroupTolerance int64
}

// Check runs every check over ops and the final logs (by partition).
func Check(ops []Op, final map[uint32]FinalLog, cfg CheckerConfig) []Anomaly {
	var out []Anomaly
	add := func(kind string, idx []int, format string, args ...any) {
		out = append(out, Anomaly{Kind: kind, Detail: fmt.Sprintf(format, args...), Ops: idx})
	}
	// Index the final logs.
	type pos struct {
		p   uint32
		off uint64
	}
	at := map[uint32]map[uint64]Record{}
	where := map[uint64][]pos{}
	for p, fl := range final {
		if fl.Err != "" {
			add(AnomalyUnreadable, nil, "partition %d: %s", p, fl.Err)
		}
		at[p] = map[uint64]Record{}
		var prev uint64
		for i, r := range fl.Records {
			if i > 0 && r.Offset != prev+1 {
				add(AnomalyFinalGap, nil, "partition %d: final log jumps from offset %d to %d", p, prev, r.Offset)
			} else if i == 0 && r.Offset != 0 {
				add(AnomalyFinalGap, nil, "partition %d: final log starts at offset %d", p, r.Offset)
			}
			prev = r.Offset
			at[p][r.Offset] = r
			where[r.ID] = append(where[r.ID], pos{p, r.Offset})
			if !r.PayloadOK {
				add(AnomalyWrongPayload, nil, "partition %d offset %d: payload or id of %#x is not what was sent", p, r.Offset, r.ID)
			}
		}
	}
	for id, ps := range where {
		if len(ps) > 1 {
			add(AnomalyDuplicate, nil, "payload id %#x stored %d times: %v", id, len(ps), ps)
		}
	}
	readable := func(p uint32) bool { fl, ok := final[p]; return ok && fl.Err == "" }

	type clientPart struct {
		client int
		p      uint32
	}
	sends := map[clientPart][]Op{} // by client and partition, in completion order
	for _, op := range ops {
		switch op.Kind {
		case KindSend:
			k := clientPart{op.Client, op.Partition}
			sends[k] = append(sends[k], op)
			if !readable(op.Partition) {
				continue
			}
			ps := where[op.PayloadID]
			switch op.Type {
			case TypeOK:
				if op.HasOffset {
					r, ok := at[op.Partition][op.Offset]
					if !ok || r.ID != op.PayloadID {
						add(AnomalyLost, []int{op.Index}, "send of %#x acknowledged at partition %d offset %d; the final log holds %#x there (found at %v)",
							op.PayloadID, op.Partition, op.Offset, r.ID, ps)
					}
				} else if len(ps) == 0 {
					add(AnomalyLost, []int{op.Index}, "send of %#x acknowledged (as a duplicate, no offset) on partition %d is nowhere in the final log", op.PayloadID, op.Partition)
				}
			case TypeFail:
				if len(ps) > 0 {
					add(AnomalyFailedVisible, []int{op.Index}, "send of %#x failed (%s) yet is stored at %v", op.PayloadID, op.Err, ps)
				}
			}
		case KindPoll, KindGroupPoll:
			if op.Type != TypeOK {
				continue
			}
			for i, r := range op.Records {
				if i > 0 && r.Offset != op.Records[i-1].Offset+1 {
					add(AnomalyPollSkip, []int{op.Index}, "%s of partition %d: offsets %d then %d", op.Kind, op.Partition, op.Records[i-1].Offset, r.Offset)
				}
				if !r.PayloadOK {
					add(AnomalyWrongPayload, []int{op.Index}, "%s of partition %d offset %d: payload or id of %#x not what was sent", op.Kind, op.Partition, r.Offset, r.ID)
				}
				if f, ok := at[op.Partition][r.Offset]; readable(op.Partition) && (!ok || f.ID != r.ID) {
					add(AnomalyDivergentRead, []int{op.Index}, "%s of partition %d read %#x at offset %d; the final log holds %#x there (present: %v)",
						op.Kind, op.Partition, r.ID, r.Offset, f.ID, ok)
				}
			}
			if op.Kind == KindPoll && len(op.Records) > 0 {
				first := op.Records[0].Offset
				if first < op.Offset {
					add(AnomalyPollBackward, []int{op.Index}, "poll of partition %d from offset %d returned offset %d first", op.Partition, op.Offset, first)
				} else if first > op.Offset {
					if _, held := at[op.Partition][op.Offset]; held || !readable(op.Partition) {
						add(AnomalyPollSkip, []int{op.Index}, "poll of partition %d from offset %d started at %d", op.Partition, op.Offset, first)
					}
				}
			}
		}
	}
	// A producer sends one message at a time: each send starts after the
	// previous one completed, so the stored offsets of its messages in a
	// partition must increase in send order, whatever the outcome reported.
	for k, ss := range sends {
		var lastOff uint64
		var lastOp = -1
		for _, op := range ss {
			ps := where[op.PayloadID]
			if len(ps) != 1 || !readable(op.Partition) {
				continue
			}
			if lastOp >= 0 && ps[0].off <= lastOff {
				add(AnomalyReordered, []int{lastOp, op.Index}, "client %d partition %d: %#x stored at offset %d after its earlier send at offset %d", k.client, k.p, op.PayloadID, ps[0].off, lastOff)
			}
			lastOff, lastOp = ps[0].off, op.Index
		}
	}
	out = append(out, checkOffsets(ops)...)
	out = append(out, checkGroups(ops, cfg)...)
	return out
}

// checkOffsets: a read of a consumer's stored offset must return at least
// the highest value whose store was acknowledged before the read began
// (the suite stores increasing values per consumer and partition).
func checkOffsets(ops []Op) []Anomaly {
	type key struct {
		consumer string
		p        uint32
	}
	stores := map[key][]Op{}
	for _, op := range ops {
		if op.Kind == KindStore && op.Type == TypeOK {
			k := key{op.Consumer, op.Partition}
			stores[k] = append(stores[k], op)
		}
	}
	var out []Anomaly
	gets := map[key][]Op{}
	for _, op := range ops {
		if op.Kind == KindGet && op.Type == TypeOK {
			k := key{op.Consumer, op.Partition}
			gets[k] = append(gets[k], op)
		}
	}
	for k, gs := range gets {
		ss := stores[k]
		sort.Slice(ss, func(i, j int) bool { return ss[i].Complete < ss[j].Complete })
		sort.Slice(gs, func(i, j int) bool { return gs[i].Invoke < gs[j].Invoke })
		// Sweep: best is the highest value stored and acknowledged before
		// the current read began.
		best, bestIdx, si := uint64(0), -1, 0
		for _, g := range gs {
			for ; si < len(ss) && ss[si].Complete < g.Invoke; si++ {
				if bestIdx < 0 || ss[si].Offset > best {
					best, bestIdx = ss[si].Offset, ss[si].Index
				}
			}
			if bestIdx < 0 {
				continue
			}
			if !g.HasOffset || g.Offset < best {
				got := "nothing"
				if g.HasOffset {
					got = fmt.Sprint(g.Offset)
				}
				out = append(out, Anomaly{Kind: AnomalyOffsetBack, Ops: []int{bestIdx, g.Index},
					Detail: fmt.Sprintf("consumer %s partition %d: stored offset read as %s after a store of %d was acknowledged", g.Consumer, g.Partition, got, best)})
			}
		}
	}
	return out
}

// interval is the span a member certainly owned a partition.
type interval struct {
	client   int
	from, to int64
	gen      uint64
	ops      [2]int
}

// checkGroups looks at each member's observations of its assignment
// (successful syncs). Two members told they own one partition in the same
// generation is a double assignment; so is an overlap, beyond the
// tolerance, of two members' certain ownership intervals: a member owned
// partition p at least from the answer of a sync showing p to the request
// of a later sync of the same generation also showing p, the member's
// calls in between being only polls (a join, a leave or a failed sync
// ends the run).
func checkGroups(ops []Op, cfg CheckerConfig) []Anomaly {
	var out []Anomaly
	type gp struct {
		gen uint64
		p   uint32
	}
	owners := map[gp]map[int]int{} // -> client -> op index
	byClient := map[int][]Op{}
	for _, op := range ops {
		switch op.Kind {
		case KindSync, KindJoin, KindLeave:
			byClient[op.Client] = append(byClient[op.Client], op)
		}
		if op.Kind == KindSync && op.Type == TypeOK {
			for _, p := range op.Partitions {
				k := gp{op.Generation, p}
				if owners[k] == nil {
					owners[k] = map[int]int{}
				}
				owners[k][op.Client] = op.Index
			}
		}
	}
	keys := make([]gp, 0, len(owners))
	for k := range owners {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].gen != keys[j].gen {
			return keys[i].gen < keys[j].gen
		}
		return keys[i].p < keys[j].p
	})
	for _, k := range keys {
		if len(owners[k]) > 1 {
			var idx []int
			var cls []int
			for c, i := range owners[k] {
				cls, idx = append(cls, c), append(idx, i)
			}
			slices.Sort(cls)
			slices.Sort(idx)
			out = append(out, Anomaly{Kind: AnomalyDoubleAssign, Ops: idx,
				Detail: fmt.Sprintf("partition %d assigned to members (clients) %v in the same generation %d", k.p, cls, k.gen)})
		}
	}
	perPart := map[uint32][]interval{}
	for cl, list := range byClient {
		sort.Slice(list, func(i, j int) bool { return list[i].Invoke < list[j].Invoke })
		// For each partition of the current run: its first sync and the
		// last one still showing it in the same generation.
		type run struct{ first, last Op }
		open := map[uint32]run{}
		emit := func(p uint32, r run) {
			if r.last.Index != r.first.Index && r.last.Invoke > r.first.Complete {
				perPart[p] = append(perPart[p], interval{client: cl, from: r.first.Complete, to: r.last.Invoke, gen: r.first.Generation,
					ops: [2]int{r.first.Index, r.last.Index}})
			}
		}
		for _, op := range list {
			if op.Kind != KindSync || op.Type != TypeOK {
				for p, r := range open {
					emit(p, r)
				}
				open = map[uint32]run{}
				continue
			}
			for p, r := range open {
				if r.first.Generation != op.Generation || !slices.Contains(op.Partitions, p) {
					emit(p, r)
					delete(open, p)
				}
			}
			for _, p := range op.Partitions {
				if r, ok := open[p]; ok {
					r.last = op
					open[p] = r
				} else {
					open[p] = run{first: op, last: op}
				}
			}
		}
		for p, r := range open {
			emit(p, r)
		}
	}
	for p, ivs := range perPart {
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].from < ivs[j].from })
		for i := range ivs {
			for j := i + 1; j < len(ivs) && ivs[j].from < ivs[i].to; j++ {
				a, b := ivs[i], ivs[j]
				if a.client == b.client || a.gen == b.gen {
					continue // same member; same generation is reported above
				}
				if overlap := min(a.to, b.to) - b.from; overlap > cfg.GroupTolerance {
					out = append(out, Anomaly{Kind: AnomalyDoubleAssign, Ops: []int{a.ops[0], a.ops[1], b.ops[0], b.ops[1]},
						Detail: fmt.Sprintf("partition %d owned by client %d (generation %d) and client %d (generation %d) for the same %v",
							p, a.client, a.gen, b.client, b.gen, nanos(overlap))})
				}
			}
		}
	}
	return out
}
