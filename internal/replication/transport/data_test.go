package transport

import (
	"bytes"
	"sync"
	"testing"
)

// connRecorder is a recorder that also counts disconnections per peer.
type connRecorder struct {
	*recorder
	mu   sync.Mutex
	down map[NodeID]int
}

func (r *connRecorder) Disconnected(id NodeID) {
	r.mu.Lock()
	r.down[id]++
	r.mu.Unlock()
}

func (r *connRecorder) downs(id NodeID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down[id]
}

// TestDataEnvelopeEncoding pins the layout of an envelope that carries
// data: uvarint group, kind, uvarint length, the bytes.
func TestDataEnvelopeEncoding(t *testing.T) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
	buf, frames, dropped := p.encode(nil, []Envelope{{Group: 300, Kind: KindCall, Data: []byte("abc")}})
	if frames != 1 || len(dropped) != 0 {
		t.Fatalf("%d frames, %d dropped", frames, len(dropped))
	}
	body := buf[frameHeaderBytes:]
	want := []byte{byte(frameBatch), 0x81, 0x80, 0x80, 0x80, 0, 0xac, 0x02, byte(KindCall), 3, 'a', 'b', 'c'}
	if !bytes.Equal(body, want) {
		t.Fatalf("encoded % x, want % x", body, want)
	}
	envs, err := decodeBatch(body[1:])
	if err != nil || len(envs) != 1 || envs[0].Group != 300 || envs[0].Kind != KindCall || string(envs[0].Data) != "abc" || envs[0].Msg != nil {
		t.Fatalf("decoded %+v, %v", envs, err)
	}
	if &envs[0].Data[0] == &body[len(body)-3] {
		t.Fatal("decoded data must not alias the frame buffer")
	}
	// A prefix travels as the start of the same body.
	pbuf, _, _ := p.encode(nil, []Envelope{{Group: 300, Kind: KindCall, Prefix: []byte("ab"), Data: []byte("c")}})
	if !bytes.Equal(pbuf, buf) {
		t.Fatalf("prefix and data encode as % x, want % x", pbuf, buf)
	}
	if _, err := decodeBatch([]byte{1, 0, byte(maxKind + 1), 0}); err == nil {
		t.Fatal("an unknown kind must be refused")
	}
}

func TestDataEnvelopesAndDisconnection(t *testing.T) {
	mk := func(id NodeID) (*node, *connRecorder) {
		n := newNode(t, Config{Self: id, Secret: []byte(secret)})
		// Swap in a handler that also sees disconnections (before Start).
		cr := &connRecorder{recorder: n.rec, down: map[NodeID]int{}}
		n.t.handler = cr
		return n, cr
	}
	a, ra := mk(0)
	b, rb := mk(1)
	link(map[NodeID]*node{0: a, 1: b})
	waitFor(t, "connection", func() bool { return a.t.Connected(1) && b.t.Connected(0) })
	a.t.Send(1, []Envelope{
		{Group: 7, Kind: KindCall, Data: []byte("request")},
		raftEnv(1, 1, "raft"),
		{Kind: KindDirectory, Data: []byte{1, 2, 3}},
	})
	b.t.Send(0, []Envelope{{Group: 7, Kind: KindReply, Data: []byte("reply")}})
	waitFor(t, "delivery", func() bool { n, _ := b.rec.counts(); m, _ := a.rec.counts(); return n == 3 && m == 1 })
	b.rec.mu.Lock()
	got := b.rec.got
	b.rec.mu.Unlock()
	if string(got[0].Data) != "request" || got[0].Group != 7 || got[1].Msg == nil || !bytes.Equal(got[2].Data, []byte{1, 2, 3}) {
		t.Fatalf("delivered %+v", got)
	}
	a.rec.mu.Lock()
	reply := a.rec.got[0]
	a.rec.mu.Unlock()
	if reply.Kind != KindReply || string(reply.Data) != "reply" {
		t.Fatalf("reply %+v", reply)
	}

	// The peer goes away: a disconnection, then data that finds no
	// connection is reported unreachable.
	b.t.Close()
	waitFor(t, "disconnection", func() bool { return ra.downs(1) > 0 })
	if rb.downs(0) == 0 {
		t.Fatal("the closing side reports its connection ended too")
	}
	a.t.Send(1, []Envelope{{Group: 8, Kind: KindCall, Data: []byte("x")}})
	if _, u := a.rec.counts(); u != 1 {
		t.Fatalf("a call without a connection is reported unreachable at once, got %d", u)
	}
}

// TestVectoredData: large data goes out from where it lies, in frames
// byte for byte those of the copying encoder, and arrives intact (handed
// over in place of a copy).
func TestVectoredData(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), vecMinBytes/8)
	q := []Envelope{
		raftEnv(1, 1, "before"),
		{Group: 9, Kind: KindCall, Prefix: []byte{7, 0}, Data: big},
		{Group: 10, Kind: KindReply, Data: []byte("small")},
		{Group: 11, Kind: KindReply, Prefix: []byte{0}, Data: big[:vecMinBytes]},
		raftEnv(1, 2, "after"),
	}
	for _, limit := range []int{DefaultMaxFrameBytes, 3 * vecMinBytes} {
		p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: limit}}}
		flat, frames, _ := p.encode(nil, q)
		buf, ext, vframes, _ := p.encodeVec(nil, q, vecMinBytes)
		if len(ext) != 2 || vframes != frames {
			t.Fatalf("limit %d: %d external pieces, %d frames (flat %d)", limit, len(ext), vframes, frames)
		}
		var joined []byte
		for _, v := range vectors(buf, ext) {
			joined = append(joined, v...)
		}
		if !bytes.Equal(joined, flat) {
			t.Fatalf("limit %d: vectored frames differ from the copied ones", limit)
		}
	}

	a := newNode(t, Config{Self: 0, Secret: []byte(secret)})
	b := newNode(t, Config{Self: 1, Secret: []byte(secret)})
	link(map[NodeID]*node{0: a, 1: b})
	waitFor(t, "connection", func() bool { return a.t.Connected(1) })
	a.t.Send(1, q)
	a.t.Send(1, []Envelope{{Group: 12, Kind: KindCall, Data: []byte("next frame")}})
	waitFor(t, "delivery", func() bool { n, _ := b.rec.counts(); return n == len(q)+1 })
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	got := b.rec.got
	if string(got[1].Data) != string(append([]byte{7, 0}, big...)) || string(got[2].Data) != "small" ||
		string(got[3].Data) != string(append([]byte{0}, big[:vecMinBytes]...)) || string(got[5].Data) != "next frame" {
		t.Fatal("data changed on the way")
	}
	if got[4].Msg.GetIndex() != 2 || string(got[0].Msg.GetEntries()[0].GetData()) != "before" {
		t.Fatal("raft messages around the data changed")
	}
}
