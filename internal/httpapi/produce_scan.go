package httpapi

import (
	"github.com/iggo-dev/iggo/internal/jsonscan"
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
	s := scanner{jsonscan.Scanner{B: data}}
	var pb produceBody
	pb.msgs = msgs[:0]
	var seenPart, seenMsgs bool
	ok := s.Object(func(key []byte) bool {
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
	s.WS()
	if !ok || !seenPart || !seenMsgs || s.I != len(s.B) {
		return produceBody{}, false
	}
	return pb, true
}

// scanner is the produce body's scanner: the shared JSON subset plus
// the two produce-specific values.
type scanner struct {
	jsonscan.Scanner
}

// hasControl reports whether b holds a byte below 0x20.
func hasControl(b []byte) bool { return jsonscan.HasControl(b) }

func (s *scanner) partitioning(pb *produceBody) bool {
	var kind, value []byte
	var seenKind, seenValue bool
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "kind":
			if seenKind {
				return false
			}
			seenKind = true
			kind, ok = s.Str()
		case "value":
			if seenValue {
				return false
			}
			seenValue = true
			value, ok = s.Str()
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
	if !s.Lit('[') {
		return false
	}
	if s.Lit(']') {
		return true
	}
	for {
		var m produceMsg
		var seenID, seenPayload bool
		ok := s.Object(func(key []byte) bool {
			var ok bool
			switch string(key) {
			case "id":
				if seenID {
					return false
				}
				seenID = true
				if s.Peek('"') {
					m.id, ok = s.DecimalString()
				} else {
					var n uint64
					n, ok = s.U64()
					m.id = wire.Uint128{Lo: n}
				}
			case "payload":
				if seenPayload {
					return false
				}
				seenPayload = true
				m.payload, ok = s.Str()
			}
			return ok
		})
		if !ok || !seenPayload {
			return false
		}
		pb.msgs = append(pb.msgs, m)
		if s.Lit(']') {
			return true
		}
		if !s.Lit(',') {
			return false
		}
	}
}
