package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/iggo-dev/iggo/wire"
)

// produceJSON is a produce body of n messages of size bytes, ids from 1.
func produceJSON(n, size int) []byte {
	p := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), size))
	var b strings.Builder
	b.WriteString(`{"partitioning":{"kind":"partition_id","value":"AAAAAA=="},"messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"payload":%q}`, i+1, p)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// produceBoth reads data on the fast path (ok reports whether it was
// taken) and on the encoding/json path, and builds both requests.
func produceBoth(data []byte) (fast, slow encoded, fastErr, slowErr error, ok bool) {
	s, t := wire.NumericID(1), wire.NumericID(2)
	now := uint64(1_700_000_000_000_000)
	var fs, ss produceState
	pb, ok := scanProduce(data, nil)
	if ok {
		fast, fastErr = buildProduce(&fs, pb, s, t, now)
	}
	pb, slowErr = decodeProduceJSON(data)
	if slowErr == nil {
		slow, slowErr = buildProduce(&ss, pb, s, t, now)
	}
	return fast, slow, fastErr, slowErr, ok
}

// sameErr compares two handler errors by status, id and reason.
func sameErr(a, b error) bool {
	ae, aok := a.(*apiError)
	be, bok := b.(*apiError)
	if aok != bok || (a == nil) != (b == nil) {
		return false
	}
	if !aok {
		return a == nil || a.Error() == b.Error()
	}
	return ae.Status == be.Status && ae.ID == be.ID && ae.Reason == be.Reason
}

// TestScanProduceFastPath: the common shapes take the fast path and build
// the same request as encoding/json; anything outside its subset falls
// back (and still gets its answer from the full reading).
func TestScanProduceFastPath(t *testing.T) {
	fast := []string{
		string(produceJSON(3, 10)),
		` { "messages" : [ { "payload" : "aGk=" , "id" : 18446744073709551615 } ] , "partitioning" : { "value" : "" , "kind" : "balanced" } } ` + "\n",
		`{"partitioning":{"kind":"messages_key","value":"a2V5"},"messages":[{"payload":"aGk="},{"id":0,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[]}`,
		`{"partitioning":{"kind":"nope","value":""},"messages":[{"id":1,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1,"payload":"!!"}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1,"payload":""}]}`,
		`{"partitioning":{"kind":"balanced","value":"é"},"messages":[{"id":1,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"1","payload":"aGk="},{"id":"340282366920938463463374607431768211455","payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"00000000000000000000000000000012","payload":"aGk="}]}`,
	}
	slow := []string{
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1,"payload":"aGk\u003d"}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1,"payload":"aGk=","user_headers":[]}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"340282366920938463463374607431768211456","payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"+1","payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"","payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"0000000000000000000000000000001a","payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":18446744073709551616,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1.0,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":01,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":-1,"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"Payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"payload":"aGk=","payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[null]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":null}`,
		`{"partitioning":null,"messages":[]}`,
		`{"partitioning":{"kind":"balanced"},"messages":[]}`,
		`{"messages":[{"payload":"aGk="}]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[],"extra":1}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[]}]`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[]} {}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"payload":"aGk="},]}`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"payload":"aGk="}]`,
		`{"partitioning":{"kind":"balanced","value":""},"messages":[{"payload":"a	b"}]}`,
		``,
		`[]`,
	}
	for _, body := range fast {
		f, s, fe, se, ok := produceBoth([]byte(body))
		if !ok {
			t.Errorf("fast path not taken for %s", body)
			continue
		}
		if !sameErr(fe, se) {
			t.Errorf("%s: fast error %v, full reading %v", body, fe, se)
		}
		if fe == nil && !strings.Contains(body, `"payload":"aGk="}`) && !bytes.Equal(f, s) {
			t.Errorf("%s: requests differ", body)
		}
	}
	for _, body := range slow {
		if _, ok := scanProduce([]byte(body), nil); ok {
			t.Errorf("fast path taken for %s", body)
		}
	}
}

// TestBuildProduceRequest: the fast path's request is the SEND_MESSAGES
// body of the messages (metadata, then a batch that parses with every
// payload and id).
func TestBuildProduceRequest(t *testing.T) {
	data := produceJSON(100, 1000)
	pb, ok := scanProduce(data, nil)
	if !ok {
		t.Fatal("fast path not taken")
	}
	var ps produceState
	req, err := buildProduce(&ps, pb, wire.NumericID(1), wire.NamedID("t"), 5)
	if err != nil {
		t.Fatal(err)
	}
	var sm wire.SendMessages
	if err := sm.DecodeMetadata(req); err != nil {
		t.Fatal(err)
	}
	if sm.MessagesCount != 100 || sm.Partitioning.Kind != wire.PartitionByID || sm.TopicID != wire.NamedID("t") {
		t.Fatalf("metadata %+v", sm)
	}
	v, rest, err := wire.ParseBatch(sm.Batch)
	if err != nil || len(rest) != 0 || v.MessageCount() != 100 {
		t.Fatalf("batch: %v rest %d count %d", err, len(rest), v.MessageCount())
	}
	reply := append(wire.AppendPollReplyHead(nil, 0, 99, 100), sm.Batch...)
	var pm wire.PolledMessages
	if err := pm.Decode(reply); err != nil {
		t.Fatal(err)
	}
	it := pm.Messages()
	i := 0
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		i++
		if m.ID != (wire.Uint128{Lo: uint64(i)}) || !bytes.Equal(m.Payload, bytes.Repeat([]byte("x"), 1000)) {
			t.Fatalf("message %d: id %v, %d payload bytes", i, m.ID, len(m.Payload))
		}
	}
}

// FuzzScanProduce: whenever the fast path accepts a body, the
// encoding/json reading accepts it too and both build the same request
// or the same error; a body encoding/json refuses is never accepted.
func FuzzScanProduce(f *testing.F) {
	f.Add(produceJSON(2, 5))
	f.Add([]byte(`{"messages":[{"payload":"aGk=","id":7}],"partitioning":{"value":"","kind":"balanced"}}`))
	f.Add([]byte(`{"partitioning":{"kind":"messages_key","value":"a2V5"},"messages":[{"id":12,"payload":"aGk="}]}`))
	f.Add([]byte(`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":1,"payload":"aGk=","user_headers":[{"key":{"kind":"raw","value":"aw=="},"value":{"kind":"raw","value":"dg=="}}]}]}`))
	f.Add([]byte(`{"partitioning":{"kind":"balanced","value":""},"messages":[{"id":"92233720368547758081","payload":"aGk="},{"id":"340282366920938463463374607431768211455","payload":"aGk="}]}`))
	f.Add([]byte(` {"partitioning":{"kind":"partition_id","value":"AQAAAA=="},"messages":[{"id":18446744073709551615,"payload":"/w=="}]} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return // refused before either reading
		}
		pb, ok := scanProduce(data, nil)
		_, slowErr := decodeProduceJSON(data)
		if !ok {
			return
		}
		if slowErr != nil {
			t.Fatalf("fast path accepted what encoding/json refuses (%v): %q", slowErr, data)
		}
		ref, _ := decodeProduceJSON(data)
		if pb.kind != ref.kind || pb.value != ref.value || len(pb.msgs) != len(ref.msgs) {
			t.Fatalf("read %+v, encoding/json %+v", pb, ref)
		}
		zeroID := false
		for i := range pb.msgs {
			a, b := pb.msgs[i], ref.msgs[i]
			if a.id != b.id || !bytes.Equal(a.payload, b.payload) || a.missing != b.missing || len(b.headers) != 0 {
				t.Fatalf("message %d: %+v vs %+v", i, a, b)
			}
			zeroID = zeroID || a.id.IsZero()
		}
		fast, slow, fe, se, _ := produceBoth(data)
		if !sameErr(fe, se) {
			t.Fatalf("errors differ: %v vs %v", fe, se)
		}
		if fe == nil && !zeroID && !bytes.Equal(fast, slow) {
			t.Fatal("requests differ")
		}
		if fe == nil && !json.Valid(data) {
			t.Fatal("accepted invalid JSON")
		}
	})
}

// TestHasControl: the word-at-a-time check agrees with a byte loop for
// every byte value at every position of strings up to 17 bytes.
func TestHasControl(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte{0xff}, n)
				if n > 2 {
					b[n/2] = '~'
				}
				b[pos] = byte(c)
				want := false
				for _, x := range b {
					want = want || x < 0x20
				}
				if got := hasControl(b); got != want {
					t.Fatalf("hasControl(%x) = %v", b, got)
				}
			}
		}
	}
}
