package transport

import (
	"math"
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

// BenchmarkEncodeMsgApp1MiB: copy is the whole message marshalled into
// the buffer (what the writer did for every follower); vectored is what
// it does, the entry's data left out of the buffer (msgvec.go).
func BenchmarkEncodeMsgApp1MiB(b *testing.B) {
	for _, c := range []struct {
		name   string
		vecMin int
	}{{"copy", math.MaxInt}, {"vectored", vecMinBytes}} {
		b.Run(c.name, func(b *testing.B) {
			p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
			q := []Envelope{msgApp1MiB()}
			var buf []byte
			b.ReportAllocs()
			b.SetBytes(1 << 20)
			for b.Loop() {
				var frames int
				buf, _, frames, _ = p.encodeVec(buf[:0], q, c.vecMin)
				if frames != 1 {
					b.Fatalf("frames %d", frames)
				}
			}
		})
	}
}

// BenchmarkDecodeMsgApp1MiB: copy is proto.Unmarshal copying the entry
// out of the frame; alias is the reader's decode, which leaves it there.
func BenchmarkDecodeMsgApp1MiB(b *testing.B) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
	buf, _, _ := p.encode(nil, []Envelope{msgApp1MiB()})
	payload := buf[frameHeaderBytes+1:]
	for _, c := range []struct {
		name     string
		aliasMin int
	}{{"copy", math.MaxInt}, {"alias", vecMinBytes}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(1 << 20)
			for b.Loop() {
				envs, _, err := decodeBatchAlias(payload, c.aliasMin)
				if err != nil || len(envs) != 1 {
					b.Fatalf("decode: %v, %d envelopes", err, len(envs))
				}
			}
		})
	}
}
