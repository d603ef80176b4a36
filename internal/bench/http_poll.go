package bench

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/iggo-dev/iggo/internal/httpapi"
	"github.com/iggo-dev/iggo/internal/jsonscan"
	"github.com/iggo-dev/iggo/wire"
)

// The benchmark reads every poll reply back into a batch, so over HTTP
// its own JSON decoding would be measured with the server's. readPoll
// scans the reply for the few fields the accounting needs and decodes
// payloads straight into the rebuilt batch; a reply it does not follow
// (escapes, other shapes, ids above u64) is read with encoding/json
// instead, so any conforming server works.

// polledJSON is what the accounting needs of one polled message.
type polledJSON struct {
	id              wire.Uint128
	offset          uint64
	timestamp       uint64
	originTimestamp uint64
	payload         []byte // base64 text
}

// pollJSON is what the accounting needs of a poll reply.
type pollJSON struct {
	partitionID   uint32
	currentOffset uint64
	msgs          []polledJSON
}

// readPoll reads a poll reply.
func readPoll(data []byte) (pollJSON, error) {
	if p, ok := scanPoll(data); ok {
		return p, nil
	}
	var res httpapi.PolledMessages
	if err := json.Unmarshal(data, &res); err != nil {
		return pollJSON{}, fmt.Errorf("poll reply: %w", err)
	}
	p := pollJSON{partitionID: res.PartitionID, currentOffset: res.CurrentOffset}
	for _, m := range res.Messages {
		p.msgs = append(p.msgs, polledJSON{id: wire.Uint128(m.Header.ID), offset: m.Header.Offset,
			timestamp: m.Header.Timestamp, originTimestamp: m.Header.OriginTimestamp, payload: []byte(m.Payload)})
	}
	return p, nil
}

// batch rebuilds the polled messages as one batch stamped with the first
// offset and the broker timestamp.
func (p *pollJSON) batch() ([]byte, error) {
	var b wire.BatchBuilder
	b.Reset(nil)
	var scratch []byte
	for _, m := range p.msgs {
		if need := base64.StdEncoding.DecodedLen(len(m.payload)); cap(scratch) < need {
			scratch = make([]byte, need)
		}
		n, err := base64.StdEncoding.Decode(scratch[:cap(scratch)], m.payload)
		if err != nil {
			return nil, fmt.Errorf("poll reply payload: %w", err)
		}
		if err := b.Add(m.id, m.originTimestamp, scratch[:n], nil); err != nil {
			return nil, fmt.Errorf("rebuild the polled batch: %w", err)
		}
	}
	batch, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("rebuild the polled batch: %w", err)
	}
	v, _, err := wire.ParseBatch(batch)
	if err != nil {
		return nil, fmt.Errorf("rebuild the polled batch: %w", err)
	}
	v.Stamp(uint64(p.partitionID), p.msgs[0].offset, p.msgs[0].timestamp)
	return batch, nil
}

// scanPoll reads a compact reply of the shape Iggo writes; ok is false
// for anything else.
func scanPoll(data []byte) (pollJSON, bool) {
	s := jsonscan.Scanner{B: data, Compact: true}
	var p pollJSON
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "partition_id":
			n, ok := s.U64()
			p.partitionID = uint32(n)
			return ok && n <= 1<<32-1
		case "current_offset":
			var ok bool
			p.currentOffset, ok = s.U64()
			return ok
		case "messages":
			return s.Array(func() bool {
				var m polledJSON
				ok := s.Object(func(key []byte) bool {
					switch string(key) {
					case "header":
						return s.Object(func(key []byte) bool {
							var ok bool
							switch string(key) {
							case "id":
								m.id, ok = s.U128()
							case "offset":
								m.offset, ok = s.U64()
							case "timestamp":
								m.timestamp, ok = s.U64()
							case "origin_timestamp":
								m.originTimestamp, ok = s.U64()
							default:
								_, ok = s.U64()
							}
							return ok
						})
					case "payload":
						var ok bool
						m.payload, ok = s.Str()
						return ok
					case "user_headers":
						return s.EmptyArray()
					}
					return false
				})
				p.msgs = append(p.msgs, m)
				return ok
			})
		case "count":
			_, ok := s.U64()
			return ok
		}
		return false
	})
	return p, ok && s.I == len(s.B)
}
