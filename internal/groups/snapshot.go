package groups

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Snapshot layout (little-endian), version 1:
//
//	version     u8 = 1
//	generation  u64
//	partitions  u32 count, then per partition (ascending id):
//	            id u32, flags u8 (bit 0 polled, bit 1 committed), polled u64, committed u64
//	members     u32 count, then per member (ascending id):
//	            id u32, client u128, count u32, partition ids u32... (list order)
//	revocations u32 count, then per revocation (creation order):
//	            partition u32, source u32, target u32, since i64 (UnixNano)
//
// The encoding is canonical: a byte string that decodes re-encodes to itself.
const (
	snapshotVersion   = 1
	snapPartitionSize = 4 + 1 + 8 + 8
	snapMemberMinSize = 4 + 16 + 4
	snapRevocationLen = 4 + 4 + 4 + 8
	flagPolled        = 1 << 0
	flagCommitted     = 1 << 1
)

// ErrCorruptSnapshot reports a group snapshot that does not decode or whose
// state breaks an invariant of the group.
var ErrCorruptSnapshot = errors.New("groups: corrupt snapshot")

// AppendTo appends the snapshot of g (layout above) to dst. The rebalancing
// timeout is configuration and not part of it.
func (g *Group) AppendTo(dst []byte) []byte {
	dst = append(dst, snapshotVersion)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(g.generation))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(g.parts)))
	for i := range g.parts {
		p := &g.parts[i]
		var flags byte
		if p.hasPolled {
			flags |= flagPolled
		}
		if p.hasCommitted {
			flags |= flagCommitted
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(p.id))
		dst = append(dst, flags)
		dst = binary.LittleEndian.AppendUint64(dst, p.polled)
		dst = binary.LittleEndian.AppendUint64(dst, p.committed)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(g.members)))
	for i := range g.members {
		m := &g.members[i]
		dst = binary.LittleEndian.AppendUint32(dst, uint32(m.id))
		dst = binary.LittleEndian.AppendUint64(dst, m.client.Lo)
		dst = binary.LittleEndian.AppendUint64(dst, m.client.Hi)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(m.partitions)))
		for _, pid := range m.partitions {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(pid))
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(g.revs)))
	for _, r := range g.revs {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.partition))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.source))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.target))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.since))
	}
	return dst
}

// Decode replaces the state of g with the snapshot in src, keeping g's
// configuration. It validates every invariant the operations rely on and
// returns an error wrapping ErrCorruptSnapshot otherwise; g is then
// unchanged. Decode of a zero Group uses the default configuration.
func (g *Group) Decode(src []byte) error {
	st, err := decodeState(src)
	if err != nil {
		return err
	}
	timeout := g.timeout
	*g = *st
	g.timeout = timeout
	if g.timeout <= 0 {
		_ = g.setConfig(Config{})
	}
	return nil
}

// snapReader is a sticky-error little-endian reader for the snapshot.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = fmt.Errorf("%w: truncated", ErrCorruptSnapshot)
		r.b = nil
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *snapReader) u8() byte {
	if s := r.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (r *snapReader) u32() uint32 {
	if s := r.take(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *snapReader) u64() uint64 {
	if s := r.take(8); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// count reads a u32 element count and checks it against limit and against
// the bytes left (each element takes at least minSize bytes), so nothing is
// allocated for a count the input cannot back.
func (r *snapReader) count(limit, minSize int, what string) int {
	n := int(r.u32())
	if r.err != nil {
		return 0
	}
	if n > limit || n*minSize > len(r.b) {
		r.err = fmt.Errorf("%w: %d %s", ErrCorruptSnapshot, n, what)
		return 0
	}
	return n
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorruptSnapshot}, args...)...)
}

// decodeState decodes and validates a snapshot into a fresh Group (without
// configuration).
func decodeState(src []byte) (*Group, error) {
	r := snapReader{b: src}
	if v := r.u8(); r.err == nil && v != snapshotVersion {
		return nil, corrupt("version %d", v)
	}
	g := &Group{byClient: make(map[ClientID]MemberID)}
	g.generation = Generation(r.u64())

	np := r.count(MaxPartitions, snapPartitionSize, "partitions")
	if r.err != nil {
		return nil, r.err
	}
	g.parts = make([]partition, np)
	for i := range g.parts {
		p := &g.parts[i]
		p.id = PartitionID(r.u32())
		flags := r.u8()
		p.polled, p.committed = r.u64(), r.u64()
		if r.err != nil {
			return nil, r.err
		}
		switch {
		case p.id >= MaxPartitionID:
			return nil, corrupt("partition id %d", p.id)
		case i > 0 && g.parts[i-1].id >= p.id:
			return nil, corrupt("partition %d out of order", p.id)
		case flags&^(flagPolled|flagCommitted) != 0:
			return nil, corrupt("partition %d flags %#x", p.id, flags)
		}
		p.hasPolled, p.hasCommitted = flags&flagPolled != 0, flags&flagCommitted != 0
		if (!p.hasPolled && p.polled != 0) || (!p.hasCommitted && p.committed != 0) {
			return nil, corrupt("partition %d stray marks", p.id)
		}
	}

	nm := r.count(MaxMembers, snapMemberMinSize, "members")
	if r.err != nil {
		return nil, r.err
	}
	g.members = make([]member, nm)
	for i := range g.members {
		m := &g.members[i]
		m.id = MemberID(r.u32())
		m.client = ClientID{Lo: r.u64(), Hi: r.u64()}
		n := r.count(np, 4, "member partitions")
		if r.err != nil {
			return nil, r.err
		}
		if i > 0 && g.members[i-1].id >= m.id {
			return nil, corrupt("member %d out of order", m.id)
		}
		if _, dup := g.byClient[m.client]; dup {
			return nil, corrupt("member %d: duplicate client", m.id)
		}
		g.byClient[m.client] = m.id
		if n > 0 {
			m.partitions = make([]PartitionID, n)
		}
		for k := range m.partitions {
			pid := PartitionID(r.u32())
			if r.err != nil {
				return nil, r.err
			}
			pi, ok := g.partIndex(pid)
			if !ok || g.parts[pi].owned {
				return nil, corrupt("member %d: partition %d unknown or owned twice", m.id, pid)
			}
			g.parts[pi].owned, g.parts[pi].owner = true, m.id
			m.partitions[k] = pid
		}
	}
	for i := range g.parts {
		p := &g.parts[i]
		// With members, every partition is owned (step 1 of the cooperative
		// rebalance and the full rebalance both assign all of them); marks
		// belong to an owner.
		if (nm > 0 && !p.owned) || (!p.owned && (p.hasPolled || p.hasCommitted)) {
			return nil, corrupt("partition %d ownership", p.id)
		}
	}

	nr := r.count(np, snapRevocationLen, "revocations")
	if r.err != nil {
		return nil, r.err
	}
	if nr > 0 {
		g.revs = make([]revocation, nr)
	}
	for i := range g.revs {
		rv := &g.revs[i]
		rv.partition = PartitionID(r.u32())
		rv.source, rv.target = MemberID(r.u32()), MemberID(r.u32())
		rv.since = int64(r.u64())
		if r.err != nil {
			return nil, r.err
		}
		pi, ok := g.partIndex(rv.partition)
		if !ok {
			return nil, corrupt("revocation of unknown partition %d", rv.partition)
		}
		p := &g.parts[pi]
		_, targetOK := slices.BinarySearchFunc(g.members, rv.target, func(m member, id MemberID) int {
			return cmpUint(uint64(m.id), uint64(id))
		})
		// A revocation without in-flight data is valid: JoinPending
		// creates them and a log-driven caller completes them with a
		// later entry (CompleteRevocation).
		if p.revoking || !p.owned || p.owner != rv.source || rv.source == rv.target || !targetOK {
			return nil, corrupt("revocation of partition %d", rv.partition)
		}
		p.revoking = true
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, corrupt("%d trailing bytes", len(r.b))
	}
	return g, nil
}
