package partition

import (
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Traffic is a topic's message and byte counters, summed over its open
// partitions: messages and stored-batch bytes appended, and messages and
// batch bytes returned by polls.
type Traffic struct {
	MessagesIn, BytesIn, MessagesOut, BytesOut uint64
}

// Traffic returns the counters of one topic incarnation (zero when it is
// not open).
func (p *Plane) Traffic(t catalog.TopicRef) Traffic {
	var out Traffic
	for _, part := range p.topicParts(t) {
		out.MessagesIn += part.traffic.msgsIn.Load()
		out.BytesIn += part.traffic.bytesIn.Load()
		out.MessagesOut += part.traffic.msgsOut.Load()
		out.BytesOut += part.traffic.bytesOut.Load()
	}
	return out
}

// GroupOffset returns the offset consumer group committed on one
// partition, and whether it has one (for consumer-group lag).
func (p *Plane) GroupOffset(t catalog.TopicRef, partitionID, group uint32) (uint64, bool) {
	part := p.lookup(t.Incarnation, partitionID)
	if part == nil || part.log == nil {
		return 0, false
	}
	return part.log.Offsets().Get(storage.KindGroup, group)
}
