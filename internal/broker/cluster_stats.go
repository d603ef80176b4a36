package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Partition counters across the cluster. GET_STREAM(S), GET_TOPIC(S) and
// GET_STATS report every partition's messages, size, segments and current
// offset; a node answers them from its own metadata, and it holds only the
// partitions placed on it (docs/CLUSTER.md §6.1). For the others it asks
// the nodes that hold them, one call per node (callStats): the
// partition's leader when known, else the first node of its replica list.
// A node that holds a replica answers from it, like every read a follower
// serves from its applied state. The call carries the asking node's
// applied metadata index: the callee first applies the metadata up to it
// and the purges it wants (bounded by statsSettle), so a client that
// purged a topic through one node and reads it through another sees the
// purge.

// callStats carries a batch of partition-counter requests
// (clusterData.PartitionStatsOf) to a node that holds those partitions.
const callStats uint8 = 2

// statsTimeout bounds the calls of one counters batch; a node that does
// not answer in time leaves its partitions at zero in that reply.
const statsTimeout = 2 * time.Second

// statsSettle bounds how long the callee waits for the metadata and purges
// the caller applied before it reads its counters.
const statsSettle = time.Second

// statsVersion leads the request and reply payloads of callStats.
const statsVersion byte = 1

// clusterData is the partition plane as the metadata plane sees it in
// cluster mode: the plane, plus the counters of partitions held elsewhere
// (catalog.StatsSource).
type clusterData struct {
	*partition.Plane
	b *Broker
}

var _ catalog.StatsSource = clusterData{}

// PartitionStatsOf implements catalog.StatsSource.
func (d clusterData) PartitionStatsOf(keys []catalog.PartitionKey) []catalog.PartitionStats {
	out := make([]catalog.PartitionStats, len(keys))
	h := d.b.cl.node.host
	self := replication.NodeID(d.b.cl.self.ReplicaID)
	remote := map[replication.NodeID][]int{}
	for i, k := range keys {
		if d.Holds(k.Topic, k.Partition) {
			out[i] = d.PartitionStats(k.Topic, k.Partition)
			continue
		}
		if n, ok := d.holder(h, self, k); ok {
			remote[n] = append(remote[n], i)
		}
	}
	if len(remote) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	watermark := d.b.meta.Op()
	var wg sync.WaitGroup
	for n, idx := range remote {
		wg.Go(func() {
			batch := make([]catalog.PartitionKey, len(idx))
			for j, i := range idx {
				batch[j] = keys[i]
			}
			reply, err := h.Call(ctx, n, callStats, encodeStatsRequest(watermark, batch))
			if err == nil {
				var st []catalog.PartitionStats
				if st, err = decodeStatsReply(reply, len(batch)); err == nil {
					for j, i := range idx {
						out[i] = st[j]
					}
					return
				}
			}
			d.b.log.Debug("partition counters from another node unavailable", "node", uint64(n), "partitions", len(batch), "err", err)
		})
	}
	wg.Wait()
	return out
}

// holder is the node to ask for partition k's counters: its leader as
// this node knows it, else the first of its replicas; false when neither
// is another node.
func (d clusterData) holder(h *replication.Host, self replication.NodeID, k catalog.PartitionKey) (replication.NodeID, bool) {
	if l, ok := h.LeaderOf(replicated.GroupID(k.Topic, k.Partition)); ok && l != self {
		return l, true
	}
	replicas, _ := d.b.meta.Placement(k.Topic, k.Partition)
	for _, r := range replicas {
		if n := replication.NodeID(r); n != self {
			return n, true
		}
	}
	return 0, false
}

// statsKeyLen is one key of a request: stream u32, topic u32, incarnation
// u64, partition u32.
const statsKeyLen = 4 + 4 + 8 + 4

// statsEntryLen is one entry of a reply: held u8, current offset u64,
// messages u64, size u64, segments u32.
const statsEntryLen = 1 + 8 + 8 + 8 + 4

var errBadStats = errors.New("malformed partition counters payload")

// encodeStatsRequest: u8 version | u64 metadata index | u32 count | keys.
func encodeStatsRequest(watermark uint64, keys []catalog.PartitionKey) []byte {
	out := make([]byte, 0, 1+8+4+len(keys)*statsKeyLen)
	out = append(out, statsVersion)
	out = binary.LittleEndian.AppendUint64(out, watermark)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(keys)))
	for _, k := range keys {
		out = binary.LittleEndian.AppendUint32(out, k.Topic.StreamID)
		out = binary.LittleEndian.AppendUint32(out, k.Topic.TopicID)
		out = binary.LittleEndian.AppendUint64(out, k.Topic.Incarnation)
		out = binary.LittleEndian.AppendUint32(out, k.Partition)
	}
	return out
}

func decodeStatsRequest(p []byte) (watermark uint64, keys []catalog.PartitionKey, err error) {
	if len(p) < 13 || p[0] != statsVersion {
		return 0, nil, errBadStats
	}
	watermark = binary.LittleEndian.Uint64(p[1:])
	n := binary.LittleEndian.Uint32(p[9:])
	p = p[13:]
	if uint64(len(p)) != uint64(n)*statsKeyLen {
		return 0, nil, errBadStats
	}
	keys = make([]catalog.PartitionKey, n)
	for i := range keys {
		e := p[i*statsKeyLen:]
		keys[i] = catalog.PartitionKey{
			Topic: catalog.TopicRef{
				StreamID:    binary.LittleEndian.Uint32(e),
				TopicID:     binary.LittleEndian.Uint32(e[4:]),
				Incarnation: binary.LittleEndian.Uint64(e[8:]),
			},
			Partition: binary.LittleEndian.Uint32(e[16:]),
		}
	}
	return watermark, keys, nil
}

// encodeStatsReply: u8 version | u32 count | entries (held 0 leaves the
// counters zero: the callee does not hold that partition).
func encodeStatsReply(held []bool, stats []catalog.PartitionStats) []byte {
	out := make([]byte, 0, 1+4+len(stats)*statsEntryLen)
	out = append(out, statsVersion)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(stats)))
	for i, s := range stats {
		var h byte
		if held[i] {
			h = 1
		}
		out = append(out, h)
		out = binary.LittleEndian.AppendUint64(out, s.CurrentOffset)
		out = binary.LittleEndian.AppendUint64(out, s.Messages)
		out = binary.LittleEndian.AppendUint64(out, s.SizeBytes)
		out = binary.LittleEndian.AppendUint32(out, s.Segments)
	}
	return out
}

func decodeStatsReply(p []byte, want int) ([]catalog.PartitionStats, error) {
	if len(p) < 5 || p[0] != statsVersion || binary.LittleEndian.Uint32(p[1:]) != uint32(want) || len(p) != 5+want*statsEntryLen {
		return nil, errBadStats
	}
	out := make([]catalog.PartitionStats, want)
	for i := range out {
		e := p[5+i*statsEntryLen:]
		if e[0] == 0 {
			continue
		}
		out[i] = catalog.PartitionStats{
			CurrentOffset: binary.LittleEndian.Uint64(e[1:]),
			Messages:      binary.LittleEndian.Uint64(e[9:]),
			SizeBytes:     binary.LittleEndian.Uint64(e[17:]),
			Segments:      binary.LittleEndian.Uint32(e[25:]),
		}
	}
	return out, nil
}

// serveStats answers callStats: once the metadata up to the caller's
// index and the purges it wants for those topics applied here (bounded by
// statsSettle; the counters are read either way), the counters of the
// partitions this node holds.
func (b *Broker) serveStats(ctx context.Context, _ replication.NodeID, payload []byte) ([]byte, error) {
	watermark, keys, err := decodeStatsRequest(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", replication.ErrCallRefused, err)
	}
	settle, cancel := context.WithTimeout(ctx, statsSettle)
	defer cancel()
	b.awaitMetadata(settle, watermark)
	seen := map[uint64]bool{}
	for _, k := range keys {
		if !seen[k.Topic.Incarnation] {
			seen[k.Topic.Incarnation] = true
			_ = b.parts.AwaitPartitions(settle, k.Topic) // a purge still pending: read anyway
		}
	}
	held := make([]bool, len(keys))
	stats := make([]catalog.PartitionStats, len(keys))
	for i, k := range keys {
		if held[i] = b.parts.Holds(k.Topic, k.Partition); held[i] {
			stats[i] = b.parts.PartitionStats(k.Topic, k.Partition)
		}
	}
	return encodeStatsReply(held, stats), nil
}
