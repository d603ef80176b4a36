package client

import (
	"bytes"

	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// routeKind says how a request names its partition.
type routeKind uint8

const (
	routeNone  routeKind = iota // not a partition request, or the server picks the partition
	routeID                     // an explicit partition id
	routeKeyed                  // a message key: the server's XXH32(key) % partitions rule
)

// routeKey is what a partition request says about its partition: enough
// to find the partition's leader in the partition map.
type routeKey struct {
	kind          routeKind
	stream, topic wire.Identifier
	partition     uint32
	key           []byte // routeKeyed: a copy of the request's key
}

// partitionRoute returns the route of a request naming partition p.
func partitionRoute(stream, topic wire.Identifier, p wire.OptPartition) routeKey {
	if !p.Present {
		return routeKey{}
	}
	return routeKey{kind: routeID, stream: stream, topic: topic, partition: p.ID}
}

// sendRoute returns the route of a SEND_MESSAGES with partitioning pt.
// Balanced partitioning is the server's choice: such a request goes to
// the main connection.
func sendRoute(stream, topic wire.Identifier, pt wire.Partitioning) routeKey {
	switch pt.Kind {
	case wire.PartitionByID:
		return routeKey{kind: routeID, stream: stream, topic: topic, partition: pt.PartitionID}
	case wire.PartitionByKey:
		return routeKey{kind: routeKeyed, stream: stream, topic: topic, key: bytes.Clone(pt.Key)}
	}
	return routeKey{}
}

// routeOf returns the route of a request body (routeNone for bodies that
// are not partition requests or name no partition).
func routeOf(req appender) routeKey {
	switch r := req.(type) {
	case *wire.PollMessages:
		return partitionRoute(r.StreamID, r.TopicID, r.Partition)
	case *wire.GetConsumerOffset:
		return partitionRoute(r.StreamID, r.TopicID, r.Partition)
	case *wire.StoreConsumerOffset:
		return partitionRoute(r.StreamID, r.TopicID, r.Partition)
	case *wire.DeleteConsumerOffset:
		return partitionRoute(r.StreamID, r.TopicID, r.Partition)
	}
	return routeKey{}
}

// topicRef names a topic by numeric ids.
type topicRef struct{ stream, topic uint32 }

// topicRoute is one topic of a routeTable: its partition ids, ascending,
// and each one's leader (-1 when unknown).
type topicRoute struct {
	ids     []uint32
	leaders []int
}

// routeTable is a partition map indexed for lookups. It is immutable
// once built, except for leaders a not-leader answer clears (under
// router.mu).
type routeTable struct {
	streams map[string]uint32            // stream name -> id
	names   map[uint32]map[string]uint32 // stream id -> topic name -> id
	topics  map[topicRef]*topicRoute
	addrs   map[uint8]string // replica id -> address for the client's transport ("" none)
}

// newRouteTable indexes m; scheme picks each node's port.
func newRouteTable(m *wire.PartitionMap, scheme string) *routeTable {
	t := &routeTable{
		streams: map[string]uint32{},
		names:   map[uint32]map[string]uint32{},
		topics:  map[topicRef]*topicRoute{},
		addrs:   map[uint8]string{},
	}
	for i := range m.Nodes {
		n := &m.Nodes[i]
		t.addrs[n.ReplicaID] = mapNodeAddr(n, scheme)
	}
	for i := range m.Topics {
		mt := &m.Topics[i]
		t.streams[mt.StreamName] = mt.StreamID
		if t.names[mt.StreamID] == nil {
			t.names[mt.StreamID] = map[string]uint32{}
		}
		t.names[mt.StreamID][mt.TopicName] = mt.TopicID
		tr := &topicRoute{ids: make([]uint32, len(mt.Partitions)), leaders: make([]int, len(mt.Partitions))}
		for j := range mt.Partitions {
			p := &mt.Partitions[j]
			tr.ids[j], tr.leaders[j] = p.PartitionID, -1
			if p.HasLeader {
				tr.leaders[j] = int(p.Leader)
			}
		}
		t.topics[topicRef{mt.StreamID, mt.TopicID}] = tr
	}
	return t
}

// mapNodeAddr is the address of a map node for the transport in use (""
// when the node does not serve it).
func mapNodeAddr(n *wire.PartitionMapNode, scheme string) string {
	return endpoint(n.Host, scheme, n.TCPPort, n.QUICPort, n.WebSocketPort)
}

// topic finds the topic a request names.
func (t *routeTable) topic(stream, topic wire.Identifier) (*topicRoute, bool) {
	var ref topicRef
	var ok bool
	if ref.stream, ok = lookupID(stream, t.streams); !ok {
		return nil, false
	}
	if ref.topic, ok = lookupID(topic, t.names[ref.stream]); !ok {
		return nil, false
	}
	tr, ok := t.topics[ref]
	return tr, ok
}

// lookupID resolves an identifier: a numeric one is itself, a name is
// looked up in names.
func lookupID(id wire.Identifier, names map[string]uint32) (uint32, bool) {
	if id.Kind == wire.IDNumeric {
		return id.Num, true
	}
	v, ok := names[id.Str]
	return v, ok
}

// slot returns the index of the partition rk names in tr, applying the
// server's key rule (semantics.md §4.1) for keyed sends.
func (tr *topicRoute) slot(rk *routeKey) (int, bool) {
	if len(tr.ids) == 0 {
		return 0, false
	}
	if rk.kind == routeKeyed {
		return int(xhash.XXH32(rk.key, 0) % uint32(len(tr.ids))), true
	}
	lo, hi := 0, len(tr.ids)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if tr.ids[mid] < rk.partition {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(tr.ids) && tr.ids[lo] == rk.partition
}

// leaderAddr returns the address of the leader of the partition rk names,
// false when the table cannot tell.
func (t *routeTable) leaderAddr(rk *routeKey) (string, bool) {
	tr, ok := t.topic(rk.stream, rk.topic)
	if !ok {
		return "", false
	}
	i, ok := tr.slot(rk)
	if !ok || tr.leaders[i] < 0 {
		return "", false
	}
	a := t.addrs[uint8(tr.leaders[i])]
	return a, a != ""
}

// forget clears the leader of the partition rk names (a not-leader answer
// said the map is stale there). It reports whether it knew one.
func (t *routeTable) forget(rk *routeKey) bool {
	tr, ok := t.topic(rk.stream, rk.topic)
	if !ok {
		return false
	}
	i, ok := tr.slot(rk)
	if !ok || tr.leaders[i] < 0 {
		return false
	}
	tr.leaders[i] = -1
	return true
}

// forgetNode clears every partition led by the node at addr.
func (t *routeTable) forgetNode(addr string) {
	for id, a := range t.addrs {
		if a == "" || !sameAddr(a, addr) {
			continue
		}
		for _, tr := range t.topics {
			for i, l := range tr.leaders {
				if l == int(id) {
					tr.leaders[i] = -1
				}
			}
		}
	}
}
