package httpapi

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/iggo-dev/iggo/wire"
)

// produceBody is a parsed produce body before validation: what both the
// fast scanner and the encoding/json path yield, so one function
// (buildProduce) applies the rules to either.
type produceBody struct {
	kind, value string
	msgs        []produceMsg
}

// produceMsg is one message of a produce body. payload is the base64 text
// (aliasing the request body on the fast path); headers is the raw JSON of
// user_headers (nil when absent or null); missing marks a message
// without a payload key.
type produceMsg struct {
	id      wire.Uint128
	payload []byte
	headers []byte
	missing bool
}

// scanProduce is the fast path of the produce body: a scanner for the
// common shape only, allocating only the two partitioning strings and
// the growth of msgs. It accepts
//
//	{"partitioning": {"kind": S, "value": S}, "messages": [{"id": N, "payload": S}, ...]}
//
// with keys in any order, each at most once and spelled exactly, "id"
// optional and a u64 integer literal or a string of decimal digits (a
// u128; `iggo bench` sends ids above 2^64 so), strings without escapes,
// and only whitespace after the object. Anything else (escapes, null,
// other keys, user_headers, case-folded keys, malformed JSON) returns
// ok = false and the caller parses the body with encoding/json, which
// gives every error its exact status and text. On ok the result equals what the
// encoding/json path reads (FuzzScanProduce checks it).
func scanProduce(data []byte, msgs []produceMsg) (produceBody, bool) {
	s := scanner{b: data}
	var pb produceBody
	pb.msgs = msgs[:0]
	var seenPart, seenMsgs bool
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "partitioning":
			if seenPart {
				return false
			}
			seenPart = true
			return s.partitioning(&pb)
		case "messages":
			if seenMsgs {
				return false
			}
			seenMsgs = true
			return s.messages(&pb)
		}
		return false
	})
	s.ws()
	if !ok || !seenPart || !seenMsgs || s.i != len(s.b) {
		return produceBody{}, false
	}
	return pb, true
}

// scanner walks a JSON text; every method returns false on anything
// outside the fast path's subset.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// lit consumes c after whitespace.
func (s *scanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes or control bytes and returns its
// contents (aliasing the input). The input is valid UTF-8 (checked
// before), so the bytes are the decoded string.
func (s *scanner) str() ([]byte, bool) {
	if !s.lit('"') {
		return nil, false
	}
	n := bytes.IndexByte(s.b[s.i:], '"')
	if n < 0 {
		return nil, false
	}
	v := s.b[s.i : s.i+n]
	if bytes.IndexByte(v, '\\') >= 0 || hasControl(v) {
		return nil, false
	}
	s.i += n + 1
	return v, true
}

// hasControl reports whether b holds a byte below 0x20, eight bytes at a
// time: (x - 0x20…20) &^ x & 0x80…80 is non-zero exactly when some byte
// of x is below 0x20.
func hasControl(b []byte) bool {
	const ones, highs = 0x2020202020202020, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// object reads {"key": value, ...}; field reads each value.
func (s *scanner) object(field func(key []byte) bool) bool {
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

func (s *scanner) partitioning(pb *produceBody) bool {
	var kind, value []byte
	var seenKind, seenValue bool
	ok := s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "kind":
			if seenKind {
				return false
			}
			seenKind = true
			kind, ok = s.str()
		case "value":
			if seenValue {
				return false
			}
			seenValue = true
			value, ok = s.str()
		}
		return ok
	})
	if !ok || !seenKind || !seenValue {
		return false
	}
	pb.kind, pb.value = string(kind), string(value)
	return true
}

func (s *scanner) messages(pb *produceBody) bool {
	if !s.lit('[') {
		return false
	}
	if s.lit(']') {
		return true
	}
	for {
		var m produceMsg
		var seenID, seenPayload bool
		ok := s.object(func(key []byte) bool {
			var ok bool
			switch string(key) {
			case "id":
				if seenID {
					return false
				}
				seenID = true
				if s.peekString() {
					m.id, ok = s.decimalString()
				} else {
					m.id, ok = s.u64()
				}
			case "payload":
				if seenPayload {
					return false
				}
				seenPayload = true
				m.payload, ok = s.str()
			}
			return ok
		})
		if !ok || !seenPayload {
			return false
		}
		pb.msgs = append(pb.msgs, m)
		if s.lit(']') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}

// peekString reports whether the next value is a string.
func (s *scanner) peekString() bool {
	s.ws()
	return s.i < len(s.b) && s.b[s.i] == '"'
}

// decimalString reads an id string of 1 to 39 decimal digits whose value
// fits a u128 (what U128.UnmarshalJSON reads as decimal; hex, dashes and
// signs are left to it).
func (s *scanner) decimalString() (wire.Uint128, bool) {
	v, ok := s.str()
	if !ok || len(v) == 0 || len(v) > 39 {
		return wire.Uint128{}, false
	}
	var hi, lo uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return wire.Uint128{}, false
		}
		// (hi, lo) = (hi, lo)*10 + digit, refusing an overflow of 128 bits.
		carry, l := bits.Mul64(lo, 10)
		over, h := bits.Mul64(hi, 10)
		h, c1 := bits.Add64(h, carry, 0)
		l, c2 := bits.Add64(l, uint64(c-'0'), 0)
		h, c3 := bits.Add64(h, 0, c2)
		if over != 0 || c1 != 0 || c3 != 0 {
			return wire.Uint128{}, false
		}
		hi, lo = h, l
	}
	return wire.Uint128{Hi: hi, Lo: lo}, true
}

// u64 reads a JSON integer literal that fits a u64 (no sign, fraction,
// exponent or leading zero).
func (s *scanner) u64() (wire.Uint128, bool) {
	s.ws()
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	digits := s.b[start:s.i]
	if len(digits) == 0 || len(digits) > 20 || (digits[0] == '0' && len(digits) > 1) {
		return wire.Uint128{}, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return wire.Uint128{}, false
		}
	}
	var n uint64
	for _, c := range digits {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return wire.Uint128{}, false
		}
		n = n*10 + d
	}
	return wire.Uint128{Lo: n}, true
}
