package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// pollReply builds a decoded poll reply of n messages with the given
// payload, headers block and first id (each next message's id is one
// more). flip, when in range, xors one byte of the records with mask
// (to reach malformed header blocks); ok is false when the result is not
// a valid reply.
func pollReply(n int, payload, headers []byte, id wire.Uint128, current uint64, flip int, mask byte) (wire.PolledMessages, bool) {
	var b wire.BatchBuilder
	b.Reset(nil)
	for i := 0; i < n; i++ {
		mid := wire.Uint128{Hi: id.Hi, Lo: id.Lo + uint64(i)}
		if err := b.Add(mid, 1_700_000_000_000_000+uint64(i), payload, headers); err != nil {
			return wire.PolledMessages{}, false
		}
	}
	records, err := b.Finish()
	if err != nil {
		return wire.PolledMessages{}, false
	}
	if flip >= wire.BatchHeaderSize && flip < len(records) {
		records[flip] ^= mask
	}
	body := wire.AppendPollReplyHead(nil, 7, current, uint32(n))
	body = append(body, records...)
	var pm wire.PolledMessages
	if pm.Decode(body) != nil {
		return wire.PolledMessages{}, false
	}
	return pm, true
}

func rawHeaders(key, value []byte, kind wire.HeaderKind) []byte {
	v := wire.HeaderField{Kind: kind, Data: value}
	if v.Validate() != nil {
		v.Kind = wire.HeaderRaw
	}
	h := wire.UserHeaders{{Key: wire.HeaderField{Kind: wire.HeaderRaw, Data: key}, Value: v}}
	return h.AppendTo(nil)
}

// checkPollJSON fails when appendPollJSON differs from encoding/json's
// rendering of the structs, or is not JSON that reads back to the same
// document.
func checkPollJSON(t *testing.T, pm *wire.PolledMessages) {
	t.Helper()
	got := appendPollJSON([]byte("prefix"), pm)[len("prefix"):]
	want, err := json.Marshal(pollStructs(pm))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("appendPollJSON:\n got %.400s\nwant %.400s", got, want)
	}
	var back PolledMessages
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("output does not read back: %v", err)
	}
	if int(back.Count) != len(back.Messages) || back.PartitionID != pm.PartitionID || back.CurrentOffset != pm.CurrentOffset {
		t.Fatalf("read back %+v", back)
	}
}

// TestPollJSONMatchesStructs: the hand-written poll reply equals
// json.Marshal of the PolledMessages structs for ids below and above
// 2^64, empty and binary payloads, header entries, and a header block
// that does not parse (base64 string form).
func TestPollJSONMatchesStructs(t *testing.T) {
	hdr := rawHeaders([]byte("k"), []byte{1, 2, 3}, wire.HeaderRaw)
	cases := []struct {
		name    string
		n       int
		payload []byte
		headers []byte
		id      wire.Uint128
		flip    int
	}{
		{"plain", 3, bytes.Repeat([]byte("x"), 1000), nil, wire.Uint128{Lo: 1}, -1},
		{"big id", 2, []byte{0, 0xff, '<', '&'}, nil, wire.Uint128{Hi: 1 << 63, Lo: ^uint64(0) - 1}, -1},
		{"headers", 2, []byte("p"), hdr, wire.Uint128{Lo: 9}, -1},
		{"string header", 1, []byte("p"), rawHeaders([]byte("key"), []byte("välue"), wire.HeaderString), wire.Uint128{Lo: 9}, -1},
		{"uint64 header", 1, []byte("p"), rawHeaders([]byte("key"), []byte{1, 2, 3, 4, 5, 6, 7, 8}, wire.HeaderUint64), wire.Uint128{Lo: 9}, -1},
		{"empty payload", 1, nil, nil, wire.Uint128{Lo: 1}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pm, ok := pollReply(tc.n, tc.payload, tc.headers, tc.id, 123, tc.flip, 0)
			if !ok {
				t.Fatal("bad reply")
			}
			checkPollJSON(t, &pm)
		})
	}
	var empty wire.PolledMessages
	checkPollJSON(t, &empty)
	if got := string(appendPollJSON(nil, &empty)); got != `{"partition_id":0,"current_offset":0,"count":0,"messages":[]}` {
		t.Fatalf("empty reply %s", got)
	}
}

// TestPollJSONBadHeaderBlock: a header block whose TLV lengths do not
// add up is written as one base64 string (and still matches the structs).
func TestPollJSONBadHeaderBlock(t *testing.T) {
	hdr := rawHeaders([]byte("k"), []byte{1, 2, 3}, wire.HeaderRaw)
	pm, ok := pollReply(1, []byte("p"), hdr, wire.Uint128{Lo: 1}, 0, -1, 0)
	if !ok {
		t.Fatal("bad reply")
	}
	it := pm.Messages()
	m, _ := it.Next()
	m.UserHeaders[1] = 0x7f // the key's u32 length now runs past the block
	got := string(appendHeadersJSON(nil, m.UserHeaders))
	if got == "" || got[0] != '"' {
		t.Fatalf("headers of a broken block = %s, want a base64 string", got)
	}
	checkPollJSON(t, &pm)
}

// FuzzPollJSON: for any reply the fuzzer can build (including bytes
// flipped inside frames and header blocks), appendPollJSON equals
// json.Marshal of the structs and reads back with encoding/json.
func FuzzPollJSON(f *testing.F) {
	f.Add(uint8(3), []byte("hello"), []byte("k"), []byte("v"), uint8(0), uint64(0), uint64(1), uint64(5), -1, byte(0))
	f.Add(uint8(1), []byte{0xff, '<'}, []byte("key"), []byte{1, 2, 3, 4}, uint8(wire.HeaderUint32), uint64(3), uint64(7), uint64(0), 300, byte(0x80))
	f.Add(uint8(2), []byte("x"), []byte{}, []byte{}, uint8(0), uint64(0), uint64(0), uint64(1<<63), 270, byte(1))
	f.Fuzz(func(t *testing.T, n uint8, payload, key, value []byte, kind uint8, hi, lo, current uint64, flip int, mask byte) {
		if len(payload) > 4096 {
			payload = payload[:4096]
		}
		var headers []byte
		if len(key) >= 1 && len(key) <= 255 && len(value) >= 1 && len(value) <= 255 {
			headers = rawHeaders(key, value, wire.HeaderKind(kind))
		}
		pm, ok := pollReply(int(n%4)+1, payload, headers, wire.Uint128{Hi: hi, Lo: lo}, current, flip, mask)
		if !ok {
			return
		}
		checkPollJSON(t, &pm)
	})
}
