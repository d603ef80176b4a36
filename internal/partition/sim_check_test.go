package partition

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// simMsg is one stored message as a poll returns it: its payload, and a
// digest of every field a poll returns (id, timestamps, checksum, user
// headers, payload), so replicas are compared byte for byte.
type simMsg struct {
	offset  uint64
	payload string
	digest  uint64
}

// digestOf hashes every field of m.
func digestOf(m wire.PolledMessage) uint64 {
	h := fnv.New64a()
	var b [8 * 6]byte
	binary.LittleEndian.PutUint64(b[0:], m.Offset)
	binary.LittleEndian.PutUint64(b[8:], m.Timestamp)
	binary.LittleEndian.PutUint64(b[16:], m.OriginTimestamp)
	binary.LittleEndian.PutUint64(b[24:], m.ID.Lo)
	binary.LittleEndian.PutUint64(b[32:], m.ID.Hi)
	binary.LittleEndian.PutUint64(b[40:], m.Checksum)
	h.Write(b[:])
	h.Write(m.UserHeaders)
	h.Write([]byte{0})
	h.Write(m.Payload)
	return h.Sum64()
}

// simConverge bounds the wait for every healthy replica to hold the same
// messages after the heal (virtual time).
const simConverge = 60 * time.Second

// pollReplica reads every message of partition 0 on p, from offset 0,
// 1000 at a time.
func pollReplica(p *Plane) ([]simMsg, error) {
	var out []simMsg
	next, count := uint64(0), uint32(1000)
	for range 100000 {
		req := wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(7)},
			StreamID: wire.NumericID(simRef.StreamID), TopicID: wire.NumericID(simRef.TopicID),
			Partition: wire.OptPartition{Present: true, ID: 0},
			Strategy:  wire.PollingStrategy{Kind: wire.PollOffset, Value: next}, Count: count}
		a, err := runExchange(p.poll, wire.OpNonReplicated, wire.Uint128{Lo: 99}, 0, req.AppendTo(nil))
		if err != nil {
			return nil, fmt.Errorf("poll from %d: %w", next, err)
		}
		if a.status != 0 {
			return nil, fmt.Errorf("poll from %d: status %d", next, a.status)
		}
		var pm wire.PolledMessages
		if err := pm.Decode(a.body); err != nil {
			if count > 1 {
				// Find the offset whose record does not decode, one
				// message at a time.
				count = 1
				continue
			}
			return nil, fmt.Errorf("poll at offset %d: decode reply: %w", next, err)
		}
		n := 0
		for it := pm.Messages(); ; {
			m, ok := it.Next()
			if !ok {
				break
			}
			out = append(out, simMsg{offset: m.Offset, payload: string(m.Payload), digest: digestOf(m)})
			next = m.Offset + 1
			n++
		}
		if n == 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("poll did not end after %d messages", len(out))
}

// healthy says why node id's replica cannot be checked ("" when it can):
// it must run, hold the partition open (not stopped as corrupt) and run
// its raft group.
func (c *simCluster) healthy(id replication.NodeID) string {
	p, h, ok := c.running(id)
	if !ok {
		return "not running"
	}
	part := p.lookup(simRef.Incarnation, 0)
	switch {
	case part == nil:
		return "partition not open"
	case part.broken != nil:
		return fmt.Sprint("partition stopped: ", part.broken)
	case replicaOf(p, c.group()) == nil:
		return "no replica"
	}
	if _, ok := h.Status(c.group()); !ok {
		return "raft group not running"
	}
	return ""
}

// converge waits until a leader runs and every member of its
// configuration is healthy, applied its commit index and polls the same
// messages; at the deadline it settles for a majority of healthy members
// that agree.
// It returns the members, the healthy ones' messages and why the others
// are not healthy.
func (r *simRun) converge() (members []replication.NodeID, seqs map[replication.NodeID][]simMsg, sick map[replication.NodeID]string, converged bool) {
	c := r.c
	g := c.group()
	deadline := time.Now().Add(simConverge)
	for {
		seqs, sick = map[replication.NodeID][]simMsg{}, map[replication.NodeID]string{}
		lead, ok := c.leader()
		var v replication.View
		if ok {
			_, h, _ := c.running(lead)
			v, ok = h.Status(g)
		}
		if ok {
			members = slices.Concat(v.Voters, v.Learners)
			slices.Sort(members)
			converged = true
			for _, id := range members {
				if why := c.healthy(id); why != "" {
					sick[id] = why
					continue
				}
				p, h, _ := c.running(id)
				if mv, _ := h.Status(g); mv.Applied < v.Commit {
					converged = false
				}
				seq, err := pollReplica(p)
				if err != nil {
					sick[id] = err.Error()
					continue
				}
				seqs[id] = seq
			}
			// Replicas may have deleted different prefixes (segment
			// deletion is node-local): they must end at the same offset
			// and agree where they overlap.
			if _, conflict := unionOf(seqs); conflict != "" || !sameEnd(seqs) {
				converged = false
			}
			if converged && len(sick) == 0 {
				return members, seqs, sick, true
			}
		}
		if time.Now().After(deadline) {
			// A replica that never recovered is reported (unhealthy);
			// the rest must still agree.
			return members, seqs, sick, converged && len(seqs) > len(members)/2
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check is the checker: after the heal, every healthy replica holds the
// same messages (committed prefixes agree; no divergence), offsets run
// from 0 without a gap, no message is stored twice, every acknowledged
// send is stored exactly once, whole, in order, at its acknowledged base
// offset, and (watchLeaders) no term had two leaders.
func (r *simRun) check() simResult {
	members, seqs, sick, converged := r.converge()
	r.observe()
	var res simResult
	for _, id := range members {
		if why, ok := sick[id]; ok {
			res.unhealthy = append(res.unhealthy, fmt.Sprintf("n%d: %s", id, why))
		}
	}
	r.tr.add("check: members %v, healthy %d, unhealthy %v, converged %v", members, len(seqs), res.unhealthy, converged)
	r.traceViews()
	for _, id := range members {
		if s, ok := seqs[id]; ok && len(s) > 0 {
			r.tr.add("n%d holds %d messages, offsets %d..%d", id, len(s), s[0].offset, s[len(s)-1].offset)
		} else if ok {
			r.tr.add("n%d holds no message", id)
		}
	}
	if !converged {
		r.anomaly("no convergence within %s: members %v, healthy replicas %d, unhealthy %v", simConverge, members, len(seqs), res.unhealthy)
	}
	if len(seqs) == 0 {
		return res // nothing to check against: no convergence says it
	}
	r.verify(members, seqs, &res)
	return res
}

// verify checks the healthy members' messages (seqs) against each other
// and against what the clients were told, and fills res's counts and
// digests.
func (r *simRun) verify(members []replication.NodeID, seqs map[replication.NodeID][]simMsg, res *simResult) {
	// Committed prefixes agree: where two replicas hold an offset, they
	// hold the same message; each replica's offsets run without a gap.
	union, conflict := unionOf(seqs)
	if conflict != "" {
		r.anomaly("divergence: %s", conflict)
	}
	minFirst := uint64(1 << 63)
	for _, id := range members {
		s, ok := seqs[id]
		if !ok {
			continue
		}
		if len(s) > 0 {
			minFirst = min(minFirst, s[0].offset)
		} else {
			minFirst = 0
		}
		for i := 1; i < len(s); i++ {
			if s[i].offset != s[i-1].offset+1 {
				r.anomaly("offset gap on n%d: %d then %d", id, s[i-1].offset, s[i].offset)
				break
			}
		}
	}
	if len(union) > 0 {
		r.tr.add("check: %d messages, offsets %d..%d, first offset on the replicas from %d", len(union), union[0].offset, union[len(union)-1].offset, minFirst)
	}
	if len(union) > 0 && union[0].offset != minFirst {
		r.anomaly("no replica holds the union's first offset %d", union[0].offset)
	}
	// Each payload once.
	where := map[string]uint64{}
	for _, m := range union {
		if prev, dup := where[m.payload]; dup {
			r.anomaly("duplicate: %q stored at offsets %d and %d", m.payload, prev, m.offset)
		}
		where[m.payload] = m.offset
	}
	// Every acknowledged send: whole, in order, once, at its base.
	r.mu.Lock()
	writes := slices.Clone(r.writes)
	r.mu.Unlock()
	slices.SortFunc(writes, func(a, b *simWrite) int {
		return cmp.Or(cmp.Compare(a.client, b.client), cmp.Compare(a.request, b.request))
	})
	oh := fnv.New64a()
	for _, w := range writes {
		fmt.Fprintf(oh, "%d/%d %v %d;", w.client, w.request, w.acked, w.base)
		first, found := where[w.payloads[0]]
		present := 0
		for i, p := range w.payloads {
			at, ok := where[p]
			if ok {
				present++
			}
			if ok && found && at != first+uint64(i) {
				r.anomaly("c%d r%d: message %d at offset %d, not %d (batch not contiguous)", w.client, w.request, i, at, first+uint64(i))
			}
		}
		// A message no replica serves is, by where its offset (seen
		// before a deletion, or acknowledged) lies: deleted, when it
		// is below every replica's first offset (gone with its
		// segment, by design); unreachable, when below some replicas'
		// first offset and beyond the end of the others (those stop
		// short of it); lost otherwise.
		deleted, unreachable := 0, 0
		for i, p := range w.payloads {
			if _, ok := where[p]; ok {
				continue
			}
			at, known := r.seen[p]
			if !known && w.base >= 0 {
				at, known = uint64(w.base)+uint64(i), true
			}
			if !known {
				continue
			}
			switch below, beyond := placeOffset(seqs, at); {
			case below == len(seqs):
				deleted++
			case below+beyond == len(seqs) && beyond > 0:
				unreachable++
			}
		}
		switch {
		case w.acked:
			res.acked++
			switch {
			case present+deleted+unreachable != len(w.payloads):
				r.anomaly("lost acknowledged write: c%d r%d (%d of %d messages stored, %d deleted with their segment, base %d)", w.client, w.request, present, len(w.payloads), deleted, w.base)
			case unreachable > 0:
				r.anomaly("acknowledged write unreachable: c%d r%d (%d of %d messages deleted on some replicas and beyond the end of the others, base %d)", w.client, w.request, unreachable, len(w.payloads), w.base)
			case w.base >= 0 && present == len(w.payloads) && first != uint64(w.base):
				r.anomaly("c%d r%d acknowledged at base %d, stored at %d", w.client, w.request, w.base, first)
			}
		default:
			res.unacked++
			if present != 0 && present+deleted+unreachable != len(w.payloads) {
				r.anomaly("c%d r%d (unacknowledged) partly stored: %d of %d messages", w.client, w.request, present, len(w.payloads))
			}
		}
	}
	for p := range where {
		if !strings.HasPrefix(p, fmt.Sprintf("s%d/", r.seed)) {
			r.anomaly("unknown payload %q stored", p)
		}
	}
	sh := fnv.New64a()
	for _, m := range union {
		fmt.Fprintf(sh, "%d %s %x;", m.offset, m.payload, m.digest)
	}
	res.messages = len(union)
	res.outcomeHash, res.stateHash = oh.Sum64(), sh.Sum64()
}

// unionOf merges the replicas' messages by offset, in offset order, and
// names the first offset where two replicas hold different messages.
func unionOf(seqs map[replication.NodeID][]simMsg) ([]simMsg, string) {
	at := map[uint64]simMsg{}
	who := map[uint64]replication.NodeID{}
	ids := slices.Sorted(maps.Keys(seqs))
	conflict := ""
	for _, id := range ids {
		for _, m := range seqs[id] {
			if prev, ok := at[m.offset]; ok && prev != m && conflict == "" {
				conflict = fmt.Sprintf("offset %d: n%d holds %q (digest %016x), n%d holds %q (digest %016x)",
					m.offset, who[m.offset], prev.payload, prev.digest, id, m.payload, m.digest)
			}
			if _, ok := at[m.offset]; !ok {
				at[m.offset], who[m.offset] = m, id
			}
		}
	}
	out := make([]simMsg, 0, len(at))
	for _, o := range slices.Sorted(maps.Keys(at)) {
		out = append(out, at[o])
	}
	return out, conflict
}

// sameEnd says whether every replica's last offset is the same (an empty
// replica ends before offset 0).
func sameEnd(seqs map[replication.NodeID][]simMsg) bool {
	end, first := int64(-1), true
	for _, s := range seqs {
		e := int64(-1)
		if len(s) > 0 {
			e = int64(s[len(s)-1].offset)
		}
		if !first && e != end {
			return false
		}
		end, first = e, false
	}
	return true
}

// placeOffset counts the replicas whose first offset is above at
// (below) and those that end before at (beyond).
func placeOffset(seqs map[replication.NodeID][]simMsg, at uint64) (below, beyond int) {
	for _, s := range seqs {
		switch {
		case len(s) == 0:
			beyond++
		case at < s[0].offset:
			below++
		case at > s[len(s)-1].offset:
			beyond++
		}
	}
	return below, beyond
}
