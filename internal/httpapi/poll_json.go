package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/iggo-dev/iggo/wire"
)

// The poll reply is the largest and most frequent JSON document the API
// writes, so it is appended by hand instead of going through
// encoding/json and the PolledMessages structs (which stay the schema of
// /openapi.json and the reference of the tests). The bytes are exactly
// json.Marshal's of those structs: same key order, same number and
// string forms (TestPollJSONMatchesStructs, FuzzPollJSON).

// appendPollJSON appends the poll reply of pm: {partition_id,
// current_offset, count, messages} with count the number of messages
// actually walked.
func appendPollJSON(dst []byte, pm *wire.PolledMessages) []byte {
	count := 0
	for it := pm.Messages(); ; count++ {
		if _, ok := it.Next(); !ok {
			break
		}
	}
	dst = append(dst, `{"partition_id":`...)
	dst = strconv.AppendUint(dst, uint64(pm.PartitionID), 10)
	dst = append(dst, `,"current_offset":`...)
	dst = strconv.AppendUint(dst, pm.CurrentOffset, 10)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendUint(dst, uint64(count), 10)
	dst = append(dst, `,"messages":[`...)
	it := pm.Messages()
	for i := 0; ; i++ {
		m, ok := it.Next()
		if !ok {
			break
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPolledMessageJSON(dst, &m)
	}
	return append(dst, "]}"...)
}

// appendPolledMessageJSON appends one message: {header, payload,
// user_headers}.
func appendPolledMessageJSON(dst []byte, m *wire.PolledMessage) []byte {
	dst = append(dst, `{"header":{"checksum":`...)
	dst = strconv.AppendUint(dst, m.Checksum, 10)
	dst = append(dst, `,"id":`...)
	dst = appendU128(dst, m.ID)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendUint(dst, m.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendUint(dst, m.Timestamp, 10)
	dst = append(dst, `,"origin_timestamp":`...)
	dst = strconv.AppendUint(dst, m.OriginTimestamp, 10)
	dst = append(dst, `,"user_headers_length":`...)
	dst = strconv.AppendUint(dst, uint64(uint32(len(m.UserHeaders))), 10)
	dst = append(dst, `,"payload_length":`...)
	dst = strconv.AppendUint(dst, uint64(uint32(len(m.Payload))), 10)
	dst = append(dst, `,"reserved":0},"payload":`...)
	dst = appendBase64JSON(dst, m.Payload)
	dst = append(dst, `,"user_headers":`...)
	dst = appendHeadersJSON(dst, m.UserHeaders)
	return append(dst, '}')
}

// appendHeadersJSON appends a stored user-headers block as an entry array,
// or as one base64 string when the block does not parse (the
// PolledMessage.UserHeaders forms).
func appendHeadersJSON(dst []byte, block []byte) []byte {
	start := len(dst)
	dst = append(dst, '[')
	it := wire.IterUserHeaders(block)
	for i := 0; ; i++ {
		h, ok := it.Next()
		if !ok {
			break
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = appendHeaderFieldJSON(dst, h.Key)
		dst = append(dst, `,"value":`...)
		dst = appendHeaderFieldJSON(dst, h.Value)
		dst = append(dst, '}')
	}
	if it.Err() != nil {
		return appendBase64JSON(dst[:start], block)
	}
	return append(dst, ']')
}

// appendHeaderFieldJSON appends {kind, value} of a header key or value.
func appendHeaderFieldJSON(dst []byte, f wire.HeaderField) []byte {
	dst = append(dst, `{"kind":`...)
	dst = appendJSONString(dst, strings.ToLower(f.Kind.String()))
	dst = append(dst, `,"value":`...)
	dst = appendBase64JSON(dst, f.Data)
	return append(dst, '}')
}

// appendBase64JSON appends b as a quoted standard base64 string (its
// alphabet needs no JSON escaping).
func appendBase64JSON(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendU128 appends a message id as U128.MarshalJSON writes it.
func appendU128(dst []byte, v wire.Uint128) []byte {
	if v.Hi == 0 {
		return strconv.AppendUint(dst, v.Lo, 10)
	}
	return append(dst, U128(v).big().String()...)
}

// appendJSONString appends s quoted as encoding/json writes it. Printable
// ASCII other than `"`, `\`, `<`, `>` and `&` is copied; any other string
// (rare here: header kind names are lowercase ASCII) is handed to
// json.Marshal so the escaping stays exactly the standard library's.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// maxPooledPoll is the largest poll buffer kept in the pool.
const maxPooledPoll = 4 << 20

// pollBuffers are the reusable buffers of one poll: the binary reply and
// the JSON written from it.
type pollBuffers struct {
	reply []byte
	json  []byte
}

// getPoll takes pollBuffers from the server's pool.
func (s *Server) getPoll() *pollBuffers {
	pb, _ := s.polls.Get().(*pollBuffers)
	if pb == nil {
		return new(pollBuffers)
	}
	pb.reset()
	return pb
}

// reset drops oversized buffers so one huge poll does not pin memory.
func (pb *pollBuffers) reset() {
	if cap(pb.reply) > maxPooledPoll {
		pb.reply = nil
	}
	if cap(pb.json) > maxPooledPoll {
		pb.json = nil
	}
}
