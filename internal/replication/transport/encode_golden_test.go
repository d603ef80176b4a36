package transport

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/encode.golden")

// goldenQueue mixes every kind, a message that splits the frames under a
// 400-byte limit and one too large to send at all.
func goldenQueue() []Envelope {
	q := []Envelope{
		raftEnv(1, 10, "abc"),
		{Group: 300, Kind: KindQuiesce, Msg: &raftpb.Message{Term: new(uint64(9)), Commit: new(uint64(77)), From: new(uint64(2))}},
		{Kind: KindPing},
		raftEnv(1<<40, 1<<33, strings.Repeat("m", 200)),
		raftEnv(5, 11, strings.Repeat("x", 1000)), // too large: dropped
		{Group: 2, Kind: KindRaft, Msg: &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), To: new(uint64(3)), From: new(uint64(1))}},
		raftEnv(6, 12, strings.Repeat("y", 150)),
		{Group: 3, Kind: KindRaft, Msg: &raftpb.Message{}}, // encodes as an empty body
	}
	return q
}

// TestEncodeGolden pins the batch wire format byte for byte.
func TestEncodeGolden(t *testing.T) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: 400}}}
	buf, frames, dropped := p.encode([]byte("prefix"), goldenQueue())
	if !bytes.HasPrefix(buf, []byte("prefix")) {
		t.Fatal("encode must append after what the buffer holds")
	}
	buf = buf[len("prefix"):]
	if len(dropped) != 1 || dropped[0].Group != 5 {
		t.Fatalf("want exactly the 1000-byte message dropped, got %d", len(dropped))
	}
	if frames < 2 {
		t.Fatalf("want the queue split over several frames, got %d", frames)
	}
	path := filepath.Join("testdata", "encode.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(hex.Dump(buf)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.Dump(buf); got != string(want) {
		t.Fatalf("wire format changed:\n%s\nwant:\n%s", got, want)
	}
}
