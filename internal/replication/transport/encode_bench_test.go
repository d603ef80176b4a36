package transport

import (
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// msgApp1MiB is a MsgApp carrying one 1 MiB entry, the shape of a
// 1000 x 1000-byte producer batch replicated to a follower.
func msgApp1MiB() Envelope {
	return Envelope{Group: 7, Kind: KindRaft, Msg: &raftpb.Message{
		Type: raftpb.MsgApp.Enum(), To: new(uint64(2)), From: new(uint64(1)), Term: new(uint64(3)),
		LogTerm: new(uint64(3)), Index: new(uint64(41)), Commit: new(uint64(40)),
		Entries: []*raftpb.Entry{{Type: raftpb.EntryNormal.Enum(), Index: new(uint64(42)), Term: new(uint64(3)), Data: make([]byte, 1<<20)}},
	}}
}

func BenchmarkEncodeMsgApp1MiB(b *testing.B) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
	q := []Envelope{msgApp1MiB()}
	var buf []byte
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		var frames int
		var dropped []Envelope
		buf, frames, dropped = p.encode(buf[:0], q)
		if frames != 1 || len(dropped) != 0 {
			b.Fatalf("frames %d, dropped %d", frames, len(dropped))
		}
	}
}

func BenchmarkDecodeMsgApp1MiB(b *testing.B) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
	buf, _, _ := p.encode(nil, []Envelope{msgApp1MiB()})
	payload := buf[frameHeaderBytes+1:]
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		envs, err := decodeBatch(payload)
		if err != nil || len(envs) != 1 {
			b.Fatalf("decode: %v, %d envelopes", err, len(envs))
		}
	}
}
