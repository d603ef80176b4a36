package partition

import (
	"sync/atomic"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
)

// traffic counts what one partition took in (committed appends) and gave
// out (polls that returned messages) since it was opened. It lives in the
// partition struct the send and poll paths already hold, so counting is
// four atomic adds and no lookup or allocation; the metrics collector sums
// the partitions of a topic at scrape time (Plane.Traffic). Counters
// restart at zero when the process restarts or the partition is
// re-created, which Prometheus reads as a counter reset.
type traffic struct {
	msgsIn, bytesIn, msgsOut, bytesOut atomic.Uint64
}

// in counts a committed append of msgs messages in a record of bytes bytes
// (nothing when err is set).
func (t *traffic) in(err error, msgs uint32, bytes int) {
	if err != nil {
		return
	}
	t.msgsIn.Add(uint64(msgs))
	t.bytesIn.Add(uint64(bytes))
}

// out counts a poll answer of msgs messages in bytes bytes of batches.
func (t *traffic) out(msgs uint64, bytes int64) {
	t.msgsOut.Add(msgs)
	t.bytesOut.Add(uint64(bytes))
}

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
