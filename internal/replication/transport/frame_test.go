package transport

import (
	"bytes"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: 300}}}
	var q []Envelope
	for i := range 20 {
		q = append(q, raftEnv(uint64(i), uint64(i), "0123456789"))
	}
	buf, frames, dropped := p.encode(nil, q)
	if len(dropped) != 0 || frames < 2 {
		t.Fatalf("want several frames under a 300-byte limit, got %d frames, %d dropped", frames, len(dropped))
	}
	r := bytes.NewReader(buf)
	var got []Envelope
	for r.Len() > 0 {
		ft, payload, _, err := readFrame(r, nil, 300)
		if err != nil || ft != frameBatch {
			t.Fatalf("frame: %v type %d", err, ft)
		}
		envs, err := decodeBatch(payload)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, envs...)
	}
	if len(got) != len(q) {
		t.Fatalf("got %d envelopes, want %d", len(got), len(q))
	}
	for i := range got {
		if got[i].Group != q[i].Group || got[i].Msg.GetIndex() != q[i].Msg.GetIndex() {
			t.Fatalf("envelope %d differs", i)
		}
	}
}

func FuzzDecodeBatch(f *testing.F) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
	buf, _, _ := p.encode(nil, []Envelope{raftEnv(1, 2, "abc"), {Kind: KindPing}})
	f.Add(buf[frameHeaderBytes+1:])
	f.Add([]byte{1, 0, 3, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		envs, err := decodeBatch(b)
		if err != nil || len(envs) == 0 {
			return
		}
		out, _, dropped := p.encode(nil, envs)
		if len(dropped) != 0 {
			t.Fatalf("re-encode dropped %d", len(dropped))
		}
		_, payload, _, err := readFrame(bytes.NewReader(out), nil, DefaultMaxFrameBytes)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeBatch(payload)
		if err != nil || len(again) != len(envs) {
			t.Fatalf("round trip: %v, %d vs %d", err, len(again), len(envs))
		}
	})
}
