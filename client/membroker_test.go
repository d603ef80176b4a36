package client

import (
	"encoding/binary"
	"slices"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// memBroker is a fake-server handler that keeps messages, consumer
// offsets and one consumer group in memory, enough to drive Producer and
// Consumer through their protocol paths: GET_TOPIC, SEND_MESSAGES,
// POLL_MESSAGES (offset/first/last/next/timestamp), GET/STORE consumer
// offsets, JOIN/LEAVE/SYNC group. Assignment is set by the test.
type memBroker struct {
	t          testing.TB
	partitions uint32

	mu      sync.Mutex
	msgs    map[uint32][]wire.Message // guarded by mu
	offsets map[string]uint64         // guarded by mu: "kind/id/partition"
	members map[wire.Uint128]bool     // guarded by mu
	assign  map[wire.Uint128][]uint32 // guarded by mu
	gen     uint64                    // guarded by mu
	// fence, when set, answers the next group poll by this member with
	// the given status (5006, 5009) or, for 0, the resync sentinel.
	fence map[wire.Uint128]int // guarded by mu
	polls []wire.PollMessages  // guarded by mu
	// storedAtPoll is the poller's stored offset (-1 for none) when each
	// poll arrived.
	storedAtPoll []int64 // guarded by mu
	autoCommit   int     // guarded by mu: polls with auto_commit set
}

func newMemBroker(t testing.TB, partitions uint32) *memBroker {
	return &memBroker{
		t: t, partitions: partitions,
		msgs: map[uint32][]wire.Message{}, offsets: map[string]uint64{},
		members: map[wire.Uint128]bool{}, assign: map[wire.Uint128][]uint32{}, fence: map[wire.Uint128]int{},
	}
}

func offsetKey(c wire.Consumer, p uint32) string {
	return c.Kind.String() + "/" + c.ID.String() + "/" + itoa(int(p))
}

// setAssignment assigns partitions to client and bumps the generation.
func (b *memBroker) setAssignment(client wire.Uint128, parts ...uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.assign[client] = parts
	b.gen++
}

func (b *memBroker) stored(c wire.Consumer, p uint32) (uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.offsets[offsetKey(c, p)]
	return v, ok
}

func (b *memBroker) handle(fc *fakeConn, r fakeReq) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch r.Command() {
	case wire.CmdGetTopic:
		d := wire.TopicDetails{Topic: wire.Topic{ID: 1, Name: "t", PartitionsCount: b.partitions, CompressionAlgorithm: wire.CompressionNone}}
		for i := range b.partitions {
			d.Partitions = append(d.Partitions, wire.PartitionInfo{ID: i})
		}
		fc.reply(r, 0, d.AppendTo(nil))
	case wire.CmdSendMessages:
		var sm wire.SendMessages
		v, err := sm.Admit(r.Body)
		if err != nil {
			fc.reply(r, wire.CodeOf(err), nil)
			return true
		}
		p := sm.Partitioning.PartitionID
		base := uint64(len(b.msgs[p]))
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			b.msgs[p] = append(b.msgs[p], wire.Message{ID: m.ID(), OriginTimestamp: v.OriginTimestamp() + uint64(m.TimestampDelta()),
				Payload: append([]byte(nil), m.Payload()...), UserHeaders: append([]byte(nil), m.UserHeaders()...)})
		}
		rep := wire.SendMessagesReply{Confirmations: []wire.SendConfirmation{{StreamID: 1, TopicID: 1, PartitionID: p, BaseOffset: base}}}
		fc.reply(r, 0, rep.AppendTo(nil))
	case wire.CmdPollMessages:
		var req wire.PollMessages
		if err := req.Decode(r.Body); err != nil {
			b.t.Errorf("poll body: %v", err)
			return false
		}
		b.polls = append(b.polls, req)
		at := int64(-1)
		if v, ok := b.offsets[offsetKey(req.Consumer, req.Partition.ID)]; ok {
			at = int64(v)
		}
		b.storedAtPoll = append(b.storedAtPoll, at)
		if f, ok := b.fence[r.Hdr.Client]; ok && req.Consumer.Kind == wire.ConsumerGroupKind {
			delete(b.fence, r.Hdr.Client)
			if f != 0 {
				fc.reply(r, uint32(f), nil)
			} else {
				fc.reply(r, 0, wire.AppendPollReplyHead(nil, wire.PollResyncPartition, 0, 0))
			}
			return true
		}
		fc.reply(r, 0, b.pollLocked(r, req))
	case wire.CmdStoreConsumerOffset:
		var req wire.StoreConsumerOffset
		req.Decode(r.Body)
		if req.Consumer.Kind == wire.ConsumerGroupKind && (!b.members[r.Hdr.Client] || !slices.Contains(b.assign[r.Hdr.Client], req.Partition.ID)) {
			fc.reply(r, wire.ErrResourceNotFound.Code, nil) // group fence failure (semantics.md §5)
			return true
		}
		b.offsets[offsetKey(req.Consumer, req.Partition.ID)] = req.Offset
		fc.reply(r, 0, wire.AppendResultOK(nil))
	case wire.CmdGetConsumerOffset:
		var req wire.GetConsumerOffset
		req.Decode(r.Body)
		v, ok := b.offsets[offsetKey(req.Consumer, req.Partition.ID)]
		if !ok {
			fc.reply(r, 0, nil)
			return true
		}
		o := wire.ConsumerOffset{PartitionID: req.Partition.ID, CurrentOffset: uint64(len(b.msgs[req.Partition.ID])) - 1, StoredOffset: v}
		fc.reply(r, 0, o.AppendTo(nil))
	case wire.CmdJoinConsumerGroup:
		b.members[r.Hdr.Client] = true
		fc.reply(r, 0, wire.AppendResultOK(nil))
	case wire.CmdLeaveConsumerGroup:
		if !b.members[r.Hdr.Client] {
			fc.reply(r, 0, wire.AppendResultError(nil, wire.ErrConsumerGroupMemberNotFound.Code))
			return true
		}
		delete(b.members, r.Hdr.Client)
		fc.reply(r, 0, wire.AppendResultOK(nil))
	case wire.CmdSyncConsumerGroup:
		if !b.members[r.Hdr.Client] {
			fc.reply(r, 0, nil)
			return true
		}
		a := wire.ConsumerGroupAssignment{Generation: b.gen, Partitions: b.assign[r.Hdr.Client]}
		fc.reply(r, 0, a.AppendTo(nil))
	default:
		return false
	}
	return true
}

// pollLocked answers a poll. Caller must hold b.mu.
func (b *memBroker) pollLocked(r fakeReq, req wire.PollMessages) []byte {
	p := req.Partition.ID
	if req.Consumer.Kind == wire.ConsumerGroupKind {
		owned := false
		for _, x := range b.assign[r.Hdr.Client] {
			owned = owned || x == p
		}
		if !owned || !b.members[r.Hdr.Client] {
			return wire.AppendPollReplyHead(nil, wire.PollResyncPartition, 0, 0)
		}
	}
	log := b.msgs[p]
	cur := uint64(0)
	if len(log) > 0 {
		cur = uint64(len(log)) - 1
	}
	var start uint64
	switch req.Strategy.Kind {
	case wire.PollOffset:
		start = req.Strategy.Value
	case wire.PollFirst, wire.PollTimestamp:
		start = 0
	case wire.PollLast:
		start = uint64(max(len(log)-int(req.Count), 0))
	case wire.PollNext:
		if v, ok := b.offsets[offsetKey(req.Consumer, p)]; ok {
			start = v + 1
		}
	}
	if start >= uint64(len(log)) || req.Count == 0 {
		return wire.AppendPollReplyHead(nil, p, cur, 0)
	}
	end := min(start+uint64(req.Count), uint64(len(log)))
	batch, err := wire.AppendBatch(nil, log[start:end])
	if err != nil {
		b.t.Errorf("build poll batch: %v", err)
	}
	v, _, err := wire.ParseBatch(batch)
	if err != nil {
		b.t.Errorf("parse poll batch: %v", err)
	}
	v.Stamp(uint64(p), start, 1_000_000)
	if req.AutoCommit {
		b.autoCommit++
		b.offsets[offsetKey(req.Consumer, p)] = end - 1
	}
	out := wire.AppendPollReplyHead(nil, p, cur, uint32(end-start))
	return append(out, batch...)
}

// seed stores n messages "p<partition>-<i>" in partition p.
func (b *memBroker) seed(p uint32, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range n {
		var id [16]byte
		binary.LittleEndian.PutUint64(id[:], uint64(i+1))
		b.msgs[p] = append(b.msgs[p], wire.Message{ID: wire.GetUint128(id[:]), OriginTimestamp: 1, Payload: []byte("p" + itoa(int(p)) + "-" + itoa(i))})
	}
}
