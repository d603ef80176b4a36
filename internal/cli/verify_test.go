package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

func TestVerifyOutput(t *testing.T) {
	r := wire.VerifyPartitionReply{Partitions: []wire.PartitionVerify{
		{PartitionID: 0, Status: wire.VerifyChecked, Segments: 2, Records: 40, Bytes: 2 << 20},
		{PartitionID: 1, Status: wire.VerifyChecked, Segments: 3, Records: 60, Bytes: 3 << 20, Damaged: []wire.DamagedRange{
			{First: 32, Last: 47, Pos: 131328, Len: 65664, File: "streams/0/topics/0-3/partitions/1/00000000000000000000.log", Reason: "checksum mismatch"},
			{First: 50, Last: 50, Pos: 10, Len: 20, File: "f.log", Reason: "length"},
		}},
		{PartitionID: 2, Status: wire.VerifyNotHeld},
		{PartitionID: 3, Status: wire.VerifyStopped, Error: "corrupt"},
	}}
	v := newVerifyView(wire.NamedID("s"), wire.NumericID(4), &r)
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	writeVerify(tw, v)
	tw.Flush()
	want := `partition 0: 2 segment(s), 40 record(s), 2 MiB checked: no damage
partition 1: 3 segment(s), 60 record(s), 3 MiB checked: 2 damaged range(s), not served
  offsets 32..47: streams/0/topics/0-3/partitions/1/00000000000000000000.log bytes 131328..196992 (65664 bytes): checksum mismatch
  offset 50: f.log bytes 10..30 (20 bytes): length
partition 2: not held by this node (` + "`iggo cluster partitions`" + ` lists the nodes holding it)
partition 3: stopped, its data could not be opened: corrupt
`
	if b.String() != want {
		t.Fatalf("output\n%s\nwant\n%s", b.String(), want)
	}
	for _, tc := range []struct {
		name  string
		parts []wire.PartitionVerify
		want  string // "" for success
	}{
		{name: "clean", parts: r.Partitions[:1]},
		{name: "clean and not held", parts: []wire.PartitionVerify{r.Partitions[0], r.Partitions[2]}},
		{name: "damage", parts: r.Partitions[:2], want: "damage found in partition(s) 1"},
		{name: "stopped", parts: r.Partitions[3:], want: "partition(s) 3 could not be verified"},
		{name: "nothing held", parts: r.Partitions[2:3], want: "holds none of the partitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifyOutcome(newVerifyView(wire.NamedID("s"), wire.NumericID(4), &wire.VerifyPartitionReply{Partitions: tc.parts}))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPartitionVerify runs `iggo partition verify` against a server whose
// sealed segment had a byte flipped.
func TestPartitionVerify(t *testing.T) {
	e := newCLI(t, itest.WithConfig(func(c *config.Config) { c.Storage.ScrubInterval = 0 }))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, e.srv.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.CreateStream(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := c.CreateTopic(ctx, wire.NumericID(st.ID), "t", 2, wire.Uint64Option(wire.TopicOptSegmentSize, wire.MinSegmentSize))
	if err != nil {
		t.Fatal(err)
	}
	for b := range 40 {
		msgs := make([]wire.Message, 16)
		for i := range msgs {
			msgs[i] = wire.Message{ID: client.NewMessageID(), Payload: bytes.Repeat([]byte{byte('a' + b%26)}, 4<<10)}
		}
		if _, err := c.SendMessages(ctx, wire.NumericID(st.ID), wire.NumericID(tp.ID), wire.PartitioningByID(1), msgs); err != nil {
			t.Fatal(err)
		}
	}
	wantLines(t, e.ok("partition", "verify", "s", "t"), "partition 0: 0 segment(s)", "partition 1: ", ": no damage")

	segs := itest.Segments(t, e.srv.PartitionDir(t, st.ID, tp.ID, 1))
	if len(segs) < 2 {
		t.Fatalf("%d segments", len(segs))
	}
	d := itest.FlipRecordByte(t, e.srv.Dir, segs[0], 1)
	r := e.run("partition", "verify", "s", "t", "1")
	r.wantError(t, ExitError, "damage found in partition(s) 1")
	wantLines(t, r.stdout, "1 damaged range(s), not served",
		fmt.Sprintf("  offsets %d..%d: %s bytes %d..%d (%d bytes): ", d.First, d.Last, d.File, d.Pos, d.Pos+d.Len, d.Len))

	var v verifyView
	r = e.run("partition", "verify", "s", "t", "-o", "json")
	r.wantCode(t, ExitError)
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if len(v.Partitions) != 2 || len(v.Partitions[0].Damaged) != 0 || len(v.Partitions[1].Damaged) != 1 {
		t.Fatalf("json %+v", v)
	}
	got := v.Partitions[1].Damaged[0]
	if got.FirstOffset != d.First || got.LastOffset != d.Last || got.File != d.File || got.Position != d.Pos || got.Bytes != d.Len {
		t.Fatalf("json range %+v, want %+v", got, d)
	}
	e.ok("partition", "verify", "s", "t", "0")
	e.run("partition", "verify", "s", "t", "9").wantError(t, ExitError, "PartitionNotFound")
}
