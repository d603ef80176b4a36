package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// The benchmarks move batches of 100 × 1000-byte messages, as
// `iggo bench` does. The partition plane is replaced by two handlers in
// the dispatcher (a produce checks the batch and confirms it, a poll
// answers a fixed reply), so the figures are the HTTP layer's alone:
// net/http, authentication, JSON and the binary translation.

const benchMessages, benchPayload = 100, 1000

// messagesServer is an httptest server over a test Server whose
// dispatcher answers SEND_MESSAGES and POLL_MESSAGES, and a bearer for
// the root user.
func messagesServer(tb testing.TB) (*httptest.Server, string) {
	tb.Helper()
	s, err := newTestServer(tb, defaultHTTP(), newClock().Now)
	if err != nil {
		tb.Fatal(err)
	}
	return startMessagesServer(tb, s)
}

func startMessagesServer(tb testing.TB, s *Server) (*httptest.Server, string) {
	tb.Helper()
	pm, ok := pollReply(benchMessages, bytes.Repeat([]byte("x"), benchPayload), nil, wire.Uint128{Lo: 1}, benchMessages-1, -1, 0)
	if !ok {
		tb.Fatal("poll reply")
	}
	reply := pm.AppendTo(nil)
	s.disp.Handle(wire.CmdPollMessages, func(x *dispatch.Exchange) { x.Reply(reply) })
	s.disp.Handle(wire.CmdSendMessages, func(x *dispatch.Exchange) {
		var sm wire.SendMessages
		if sm.DecodeMetadata(x.Body) != nil {
			x.Deny(wire.ErrInvalidCommand.Code)
			return
		}
		if v, _, err := wire.ParseBatch(sm.Batch); err != nil || v.MessageCount() != sm.MessagesCount {
			x.Deny(wire.ErrInvalidCommand.Code)
			return
		}
		rep := wire.SendMessagesReply{Confirmations: []wire.SendConfirmation{{StreamID: 1, TopicID: 1, BaseOffset: 0}}}
		x.Reply(rep.AppendTo(x.Scratch()))
	})
	tok, err := s.Tokens().Issue(auth.RootUserID)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	return ts, "Bearer " + tok.Token
}

// do sends one request and returns the status and body.
func do(tb testing.TB, c *http.Client, method, url, bearer string, body []byte) (int, []byte) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, data
}

// TestMessagesOverHTTP: a produce through the whole HTTP layer reaches the
// dispatcher as a valid batch (201 and the confirmation), and a poll
// answers the JSON of the dispatcher's reply.
func TestMessagesOverHTTP(t *testing.T) {
	ts, bearer := messagesServer(t)
	c := ts.Client()
	st, body := do(t, c, "POST", ts.URL+"/streams/1/topics/1/messages", bearer, produceJSON(benchMessages, benchPayload))
	if st != 201 || string(body) != `{"confirmations":[{"stream_id":1,"topic_id":1,"partition_id":0,"base_offset":0}]}` {
		t.Fatalf("produce %d %s", st, body)
	}
	st, body = do(t, c, "POST", ts.URL+"/streams/1/topics/1/messages", bearer, []byte(`{"partitioning":{"kind":"balanced","value":""},"messages":[{"payload":""}]}`))
	if st != 422 || !bytes.Contains(body, []byte("must not be empty")) {
		t.Fatalf("empty payload %d %s", st, body)
	}
	st, body = do(t, c, "GET", ts.URL+"/streams/1/topics/1/messages?partition_id=0&kind=first&count=100", bearer, nil)
	var pm PolledMessages
	if st != 200 || json.Unmarshal(body, &pm) != nil || pm.Count != benchMessages || len(pm.Messages) != benchMessages || pm.Messages[99].Header.ID != (U128{Lo: 100}) {
		t.Fatalf("poll %d %.300s", st, body)
	}
}

// BenchmarkProduce: POST .../messages with 100 × 1000-byte messages.
func BenchmarkProduce(b *testing.B) {
	ts, bearer := messagesServer(b)
	c := ts.Client()
	body := produceJSON(benchMessages, benchPayload)
	b.SetBytes(benchMessages * benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		if st, out := do(b, c, "POST", ts.URL+"/streams/1/topics/1/messages", bearer, body); st != 201 {
			b.Fatalf("%d %s", st, out)
		}
	}
}

// BenchmarkPoll: GET .../messages answering 100 × 1000-byte messages.
func BenchmarkPoll(b *testing.B) {
	ts, bearer := messagesServer(b)
	c := ts.Client()
	url := ts.URL + "/streams/1/topics/1/messages?partition_id=0&kind=first&count=100"
	b.SetBytes(benchMessages * benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		if st, out := do(b, c, "GET", url, bearer, nil); st != 200 {
			b.Fatalf("%d %.200s", st, out)
		}
	}
}

// BenchmarkProduceDecode compares the two readings of a produce body and
// the request built from it, without HTTP.
func BenchmarkProduceDecode(b *testing.B) {
	data := produceJSON(benchMessages, benchPayload)
	s, t := wire.NumericID(1), wire.NumericID(1)
	b.Run("scan", func(b *testing.B) {
		var ps produceState
		b.SetBytes(benchMessages * benchPayload)
		b.ReportAllocs()
		for b.Loop() {
			pb, ok := scanProduce(data, ps.msgs)
			if !ok {
				b.Fatal("fast path not taken")
			}
			ps.msgs = pb.msgs
			if _, err := buildProduce(&ps, pb, s, t, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(benchMessages * benchPayload)
		b.ReportAllocs()
		for b.Loop() {
			var ps produceState
			pb, err := decodeProduceJSON(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := buildProduce(&ps, pb, s, t, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPollEncode compares the hand-written poll reply with
// encoding/json over the structs, without HTTP.
func BenchmarkPollEncode(b *testing.B) {
	pm, ok := pollReply(benchMessages, bytes.Repeat([]byte("x"), benchPayload), nil, wire.Uint128{Lo: 1}, 0, -1, 0)
	if !ok {
		b.Fatal("poll reply")
	}
	b.Run("append", func(b *testing.B) {
		var buf []byte
		b.SetBytes(benchMessages * benchPayload)
		b.ReportAllocs()
		for b.Loop() {
			buf = appendPollJSON(buf[:0], &pm)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(benchMessages * benchPayload)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(pollStructs(&pm)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
