package bench

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/iggo-dev/iggo/internal/httpapi"
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
	s := jsonScan{b: data}
	var p pollJSON
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "partition_id":
			n, ok := s.u64()
			p.partitionID = uint32(n)
			return ok && n <= 1<<32-1
		case "current_offset":
			var ok bool
			p.currentOffset, ok = s.u64()
			return ok
		case "messages":
			return s.array(func() bool {
				var m polledJSON
				ok := s.object(func(key []byte) bool {
					switch string(key) {
					case "header":
						return s.object(func(key []byte) bool {
							var ok bool
							switch string(key) {
							case "id":
								m.id, ok = s.u128()
							case "offset":
								m.offset, ok = s.u64()
							case "timestamp":
								m.timestamp, ok = s.u64()
							case "origin_timestamp":
								m.originTimestamp, ok = s.u64()
							default:
								_, ok = s.u64()
							}
							return ok
						})
					case "payload":
						var ok bool
						m.payload, ok = s.str()
						return ok
					case "user_headers":
						return s.emptyArray()
					}
					return false
				})
				p.msgs = append(p.msgs, m)
				return ok
			})
		case "count":
			_, ok := s.u64()
			return ok
		}
		return false
	})
	return p, ok && s.i == len(s.b)
}

// jsonScan walks compact JSON (no whitespace); each method returns false
// on anything it does not follow.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) lit(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes (aliasing the input).
func (s *jsonScan) str() ([]byte, bool) {
	if !s.lit('"') {
		return nil, false
	}
	n := bytes.IndexByte(s.b[s.i:], '"')
	if n < 0 {
		return nil, false
	}
	v := s.b[s.i : s.i+n]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	s.i += n + 1
	return v, true
}

func (s *jsonScan) u64() (uint64, bool) {
	v, ok := s.u128()
	return v.Lo, ok && v.Hi == 0
}

// u128 reads an unsigned integer literal below 2^128 (message ids are
// written as bare integers that may exceed 2^64).
func (s *jsonScan) u128() (wire.Uint128, bool) {
	start := s.i
	var hi, lo uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		carry, l := bits.Mul64(lo, 10)
		over, h := bits.Mul64(hi, 10)
		h, c1 := bits.Add64(h, carry, 0)
		l, c2 := bits.Add64(l, uint64(s.b[s.i]-'0'), 0)
		h, c3 := bits.Add64(h, 0, c2)
		if over != 0 || c1 != 0 || c3 != 0 {
			return wire.Uint128{}, false
		}
		hi, lo = h, l
		s.i++
	}
	n := s.i - start
	if n == 0 || (n > 1 && s.b[start] == '0') {
		return wire.Uint128{}, false
	}
	return wire.Uint128{Hi: hi, Lo: lo}, true
}

func (s *jsonScan) object(field func(key []byte) bool) bool {
	if !s.lit('{') {
		return false
	}
	if s.lit('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok || !s.lit(':') || !field(key) {
			return false
		}
		if s.lit('}') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}

func (s *jsonScan) array(elem func() bool) bool {
	if !s.lit('[') {
		return false
	}
	if s.lit(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.lit(']') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}

func (s *jsonScan) emptyArray() bool { return s.lit('[') && s.lit(']') }
