package bench

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/iggo-dev/iggo/internal/httpapi"
	"github.com/iggo-dev/iggo/wire"
)

// pollDoc is a poll reply as the server writes it (json.Marshal of the
// httpapi structs gives the server's bytes, checked in httpapi).
func pollDoc(n int, id wire.Uint128, offset, ts uint64, payload []byte) []byte {
	res := httpapi.PolledMessages{PartitionID: 3, CurrentOffset: offset + uint64(n), Count: uint32(n), Messages: []httpapi.PolledMessage{}}
	for i := range n {
		res.Messages = append(res.Messages, httpapi.PolledMessage{
			Header: httpapi.PolledHeader{ID: httpapi.U128{Hi: id.Hi, Lo: id.Lo + uint64(i)}, Offset: offset + uint64(i), Timestamp: ts,
				OriginTimestamp: ts - uint64(i), PayloadLength: uint32(len(payload)), Checksum: 77},
			Payload: base64.StdEncoding.EncodeToString(payload), UserHeaders: []httpapi.HeaderEntryJSON{},
		})
	}
	data, _ := json.Marshal(res)
	return data
}

// checkReadPoll: the scan takes the server's reply and reads what
// encoding/json reads.
func checkReadPoll(t *testing.T, data []byte) {
	t.Helper()
	fast, ok := scanPoll(data)
	if !ok {
		t.Fatalf("scan refused %.300s", data)
	}
	var res httpapi.PolledMessages
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if fast.partitionID != res.PartitionID || fast.currentOffset != res.CurrentOffset || len(fast.msgs) != len(res.Messages) {
		t.Fatalf("scan %+v, encoding/json %+v", fast, res)
	}
	for i, m := range res.Messages {
		f := fast.msgs[i]
		if f.id != wire.Uint128(m.Header.ID) || f.offset != m.Header.Offset || f.timestamp != m.Header.Timestamp ||
			f.originTimestamp != m.Header.OriginTimestamp || string(f.payload) != m.Payload {
			t.Fatalf("message %d: %+v vs %+v", i, f, m)
		}
	}
}

func TestReadPoll(t *testing.T) {
	checkReadPoll(t, pollDoc(3, wire.Uint128{Hi: 5, Lo: 1}, 10, 1_700_000_000_000_000, []byte("abc")))
	checkReadPoll(t, pollDoc(0, wire.Uint128{}, 0, 0, nil))
	data := pollDoc(2, wire.Uint128{Hi: ^uint64(0), Lo: 1}, 0, 9, bytes.Repeat([]byte{0xff}, 100))
	checkReadPoll(t, data)
	p, err := readPoll(data)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := p.batch()
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := wire.ParseBatch(batch)
	if err != nil || v.MessageCount() != 2 {
		t.Fatalf("batch %v", err)
	}
	// Another shape (whitespace, headers) is read by encoding/json.
	spaced := bytes.ReplaceAll(data, []byte(`,"`), []byte(`, "`))
	if _, ok := scanPoll(spaced); ok {
		t.Fatal("scan took a spaced reply")
	}
	q, err := readPoll(spaced)
	if err != nil || len(q.msgs) != 2 || q.msgs[1].id != p.msgs[1].id {
		t.Fatalf("fallback %v %+v", err, q)
	}
}

// FuzzReadPoll: for any reply the server can write, the scan agrees with
// encoding/json.
func FuzzReadPoll(f *testing.F) {
	f.Add(uint8(2), uint64(1), uint64(2), uint64(3), uint64(4), []byte("x"))
	f.Add(uint8(0), uint64(0), uint64(0), uint64(0), uint64(0), []byte{})
	f.Fuzz(func(t *testing.T, n uint8, hi, lo, offset, ts uint64, payload []byte) {
		checkReadPoll(t, pollDoc(int(n%5), wire.Uint128{Hi: hi, Lo: lo}, offset, ts, payload))
	})
}
