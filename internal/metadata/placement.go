package metadata

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

// Partition placement (cluster mode). Each partition has an ordered list
// of the replica ids that hold it; the first is its preferred leader. The
// metadata leader chooses the lists of new partitions (Config.Placer)
// before it proposes a CREATE_TOPIC or CREATE_PARTITIONS and carries them
// in the entry's Secret, so every node applies the same lists; a move
// changes one partition's list with a KindPlacement entry. A partition
// with no list (single-node mode, topics created before placement) is
// held by every voter of the metadata group.

// Placer chooses the replicas of new partitions: the broker in cluster
// mode, from the roster, the live voters and the cluster's default
// replication factor.
type Placer interface {
	// Place returns count replica lists of rf replicas each (rf 0: the
	// cluster's default), balanced against existing (every partition's
	// list). A replication factor the cluster cannot hold is an error
	// wrapping wire.ErrInvalidReplicationFactor.
	Place(existing [][]uint8, rf uint8, count int) ([][]uint8, error)
}

// maxPlacementSecret bounds a placement carried in an entry: 1000
// partitions (wire.MaxPartitionsPerRequest) of up to 255 replicas.
const maxPlacementSecret = 5 + wire.MaxPartitionsPerRequest*255

// encodePlacement encodes replica lists of equal length: rf u8, count
// u32, then count × rf replica ids.
func encodePlacement(lists [][]uint8) []byte {
	rf := 0
	if len(lists) > 0 {
		rf = len(lists[0])
	}
	b := make([]byte, 0, 5+len(lists)*rf)
	b = append(b, uint8(rf))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(lists)))
	for _, l := range lists {
		b = append(b, l...)
	}
	return b
}

// decodePlacement decodes what encodePlacement wrote for want lists; an
// empty src (no placement) or one that does not hold want lists of
// distinct replicas yields nil.
func decodePlacement(src []byte, want int) [][]uint8 {
	if len(src) < 5 {
		return nil
	}
	rf := int(src[0])
	n := int(binary.LittleEndian.Uint32(src[1:]))
	body := src[5:]
	if rf == 0 || n != want || len(body) != n*rf {
		return nil
	}
	out := make([][]uint8, n)
	for i := range out {
		l := slices.Clone(body[i*rf : (i+1)*rf])
		if hasDuplicate(l) {
			return nil
		}
		out[i] = l
	}
	return out
}

func hasDuplicate(l []uint8) bool {
	var seen [256]bool
	for _, r := range l {
		if seen[r] {
			return true
		}
		seen[r] = true
	}
	return false
}

// placeFor runs the Placer for count new partitions of a topic whose
// replication_factor option is rf; nil, 0 without a Placer (single
// node). The status is the pre-commit deny code.
func (s *Store) placeFor(rf uint8, count int) ([]byte, uint32) {
	if s.cfg.Placer == nil || count == 0 {
		return nil, 0
	}
	s.mu.RLock()
	existing := s.st.placements()
	s.mu.RUnlock()
	lists, err := s.cfg.Placer.Place(existing, rf, count)
	if err != nil {
		s.log.Warn("partitions not placed", "err", err)
		var we *wire.Error
		if errors.As(err, &we) {
			return nil, we.Code
		}
		return nil, wire.ErrInvalidReplicationFactor.Code
	}
	return encodePlacement(lists), 0
}

// topicReplicationFactor is the replication_factor option of a topic (0
// when it has none or is not found).
func (s *Store) topicReplicationFactor(sid, tid wire.Identifier) uint8 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, t := s.st.resolveTopic(sid, tid); t != nil {
		return t.Opts.Settings.ReplicationFactor
	}
	return 0
}

// placements returns every placed partition's replica list.
func (s *state) placements() [][]uint8 {
	var out [][]uint8
	for _, st := range s.streams {
		for _, t := range st.Topics {
			for _, p := range t.Partitions {
				if len(p.Replicas) > 0 {
					out = append(out, p.Replicas)
				}
			}
		}
	}
	return out
}

// placedRef is ref(st, t) with the replica lists of the partitions ids
// (none when they are not placed).
func placedRef(r catalog.TopicRef, t *topic, ids []uint32) catalog.TopicRef {
	for _, id := range ids {
		if int(id) < len(t.Partitions) && len(t.Partitions[id].Replicas) > 0 {
			if r.Placement == nil {
				r.Placement = make(map[uint32][]uint8, len(ids))
			}
			r.Placement[id] = slices.Clone(t.Partitions[id].holders())
		}
	}
	return r
}

// PartitionPlacement is one partition and its replica list.
type PartitionPlacement struct {
	Ref       catalog.TopicRef
	Partition uint32
	// Replicas is the ordered replica list (nil: every voter).
	Replicas []uint8
	// Target is the list a move in progress leads to (nil: none).
	Target []uint8
}

// Placements lists every partition of every topic with its replica
// list, in (stream, topic, partition) order.
func (s *Store) Placements() []PartitionPlacement {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []PartitionPlacement
	for _, sid := range sortedKeys(s.st.streams) {
		st := s.st.streams[sid]
		for _, tid := range sortedKeys(st.Topics) {
			t := st.Topics[tid]
			r := ref(st, t)
			for _, p := range t.Partitions {
				out = append(out, PartitionPlacement{Ref: r, Partition: p.ID, Replicas: slices.Clone(p.Replicas), Target: slices.Clone(p.Target)})
			}
		}
	}
	return out
}

// Replicas returns the replica list of one partition of topic t (nil:
// unknown or held by every voter). It implements catalog.Topics.
func (s *Store) Replicas(t catalog.TopicRef, partition uint32) []uint8 {
	r, _ := s.Placement(t, partition)
	return r
}

// Placement returns one partition's replica list and the target of a
// move in progress (nil, nil: unknown, or held by every voter).
func (s *Store) Placement(t catalog.TopicRef, partition uint32) (replicas, target []uint8) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, tp := s.st.topicByIDs(t.StreamID, t.TopicID)
	if tp == nil || tp.Incarnation != t.Incarnation || int(partition) >= len(tp.Partitions) {
		return nil, nil
	}
	p := &tp.Partitions[partition]
	return slices.Clone(p.Replicas), slices.Clone(p.Target)
}

// topicByIDs finds a topic by numeric ids (nil, nil when missing).
func (s *state) topicByIDs(sid, tid uint32) (*stream, *topic) {
	st := s.streams[sid]
	if st == nil {
		return nil, nil
	}
	return st, st.Topics[tid]
}

// placementBody is a KindPlacement entry's body: stream u32, topic u32,
// incarnation u64, partition u32, count u8, the replica ids, count u8,
// the target's ids.
func placementBody(t catalog.TopicRef, partition uint32, replicas, target []uint8) []byte {
	b := make([]byte, 0, 22+len(replicas)+len(target))
	b = binary.LittleEndian.AppendUint32(b, t.StreamID)
	b = binary.LittleEndian.AppendUint32(b, t.TopicID)
	b = binary.LittleEndian.AppendUint64(b, t.Incarnation)
	b = binary.LittleEndian.AppendUint32(b, partition)
	b = append(b, uint8(len(replicas)))
	b = append(b, replicas...)
	b = append(b, uint8(len(target)))
	return append(b, target...)
}

// ErrPlacementStale: the partition of a placement change no longer
// exists (its topic was deleted or created again).
var ErrPlacementStale = errors.New("metadata: partition of the placement change no longer exists")

// CommitPlacement commits a new replica list for one partition, and the
// target of a move (nil: none), from any node (a follower forwards it
// to the metadata leader). It returns once
// the entry applied here; the partition plane of every node then creates
// or drops its replica (catalog.Placer) so that the nodes of both lists
// hold the partition.
func (s *Store) CommitPlacement(ctx context.Context, t catalog.TopicRef, partition uint32, replicas, target []uint8) error {
	if len(replicas) == 0 || hasDuplicate(replicas) || hasDuplicate(target) {
		return fmt.Errorf("metadata: replica list %v (target %v) of partition %d: empty or with a duplicate", replicas, target, partition)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := s.submit(Entry{Kind: KindPlacement, Body: placementBody(t, partition, replicas, target)})
	if err != nil {
		return fmt.Errorf("commit placement of partition %d: %w", partition, err)
	}
	if c.res.code != 0 {
		return ErrPlacementStale
	}
	return nil
}

// applyPlacement applies a KindPlacement entry.
func (s *state) applyPlacement(e *Entry) result {
	b := e.Body
	if len(b) < 22 || b[20] == 0 || len(b) < 22+int(b[20]) || len(b) != 22+int(b[20])+int(b[21+int(b[20])]) {
		return reject(wire.ErrInvalidCommand)
	}
	le := binary.LittleEndian
	sid, tid, inc, pid := le.Uint32(b), le.Uint32(b[4:]), le.Uint64(b[8:]), le.Uint32(b[16:])
	n := int(b[20])
	replicas := slices.Clone(b[21 : 21+n])
	var target []uint8
	if len(b) > 22+n {
		target = slices.Clone(b[22+n:])
	}
	st, t := s.topicByIDs(sid, tid)
	if t == nil || t.Incarnation != inc || int(pid) >= len(t.Partitions) || hasDuplicate(replicas) || hasDuplicate(target) {
		return reject(wire.ErrPartitionNotFound)
	}
	p := &t.Partitions[pid]
	p.Replicas, p.Target = replicas, target
	return result{effects: []effect{{kind: effPlace, ref: ref(st, t), partition: pid, replicas: p.holders()}}}
}
