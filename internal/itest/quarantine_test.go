package itest

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/wire"
)

// quarLogBuffer collects a broker's log lines.
type quarLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *quarLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *quarLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// quarFlipPayload flips the last byte (message payload) of the stored
// record whose base offset is base in the partition logs under dir, and
// returns the record's message count.
func quarFlipPayload(t *testing.T, dir string, base uint64) uint32 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "streams", "*", "topics", "*", "partitions", "*", "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("segment logs: %v %v", logs, err)
	}
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; pos < len(b); {
			v, rest, err := wire.ParseBatch(b[pos:])
			if err != nil {
				t.Fatalf("%s at %d: %v", path, pos, err)
			}
			n := len(b) - pos - len(rest)
			if v.BaseOffset() == base {
				b[pos+n-1] ^= 0x20
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return v.MessageCount()
			}
			pos += n
		}
	}
	t.Fatalf("no record at offset %d", base)
	return 0
}

// TestDamagedRecordSkipped is issue 28's single-node case: 3,000 messages
// written, the server stopped, one byte of the middle record's payload
// flipped on disk, the server started again. Every other message is
// served, the damaged offsets are absent (a poll at or inside them gets
// the messages after them; a consumer with auto-commit reads through),
// the server's log names them and /metrics counts them. The damaged record
// is in the active segment, which recovery verifies whole.
func TestDamagedRecordSkipped(t *testing.T) { testDamagedRecordSkipped(t, nil, 100) }

// TestDamagedRecordSkippedSealed is the same with 1 MiB segments and 1 KB
// payloads (about 3.5 MB), so the damaged record is in a sealed segment, which recovery (without
// verify_sealed) trusts after checking its index and last record: the
// first poll that would return the record verifies it, and it is skipped,
// logged and counted all the same.
func TestDamagedRecordSkippedSealed(t *testing.T) {
	testDamagedRecordSkipped(t, wire.Options{wire.Uint64Option(wire.TopicOptSegmentSize, wire.MinSegmentSize)}, 1000)
}

func testDamagedRecordSkipped(t *testing.T, topicOpts wire.Options, payload int) {
	const total, perBatch = 3000, 3
	sealed := topicOpts != nil
	dir := t.TempDir()
	s1 := Start(t, WithDir(dir))
	c := s1.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "s")
	tp := mkTopic(t, c, st, "t", 1, topicOpts).ID
	sent := sentLog{}
	for i := 0; i < total; i += perBatch {
		batch := Batch(t, uint64(i+1), Payloads(perBatch, payload, fmt.Sprintf("m%d-", i))...)
		conf := c.MustSend(sid(st), sid(tp), wire.PartitioningByID(0), batch)
		sent.add(t, conf.BaseOffset, batch)
	}
	s1.Stop()

	const damagedBase = total / 2 // offsets 1500..1502
	count := quarFlipPayload(t, dir, damagedBase)
	if sealed {
		quarSealedSegmentHolds(t, dir, damagedBase)
	}
	damaged := map[uint64]bool{}
	for i := range uint64(count) {
		damaged[damagedBase+i] = true
	}

	var logs quarLogBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s2 := Start(t, WithDir(dir), WithBrokerOptions(broker.WithLogger(logger)))
	r := s2.Dial(t)
	r.LoginRoot()
	req := func(s wire.PollingStrategy, n uint32, auto bool) wire.PollMessages {
		return wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(9)), StreamID: sid(st), TopicID: sid(tp),
			Partition: wire.SomePartition(0), Strategy: s, Count: n, AutoCommit: auto}
	}

	// Poll everything by offset, continuing after what came back.
	var got []uint64
	for from, rounds := uint64(0), 0; from < total; rounds++ {
		if rounds > total {
			t.Fatal("polls do not advance")
		}
		offs := sent.checkPolled(t, r.MustPoll(req(wire.OffsetStrategy(from), 100, false)), 0)
		if len(offs) == 0 {
			t.Fatalf("poll from %d: nothing", from)
		}
		got = append(got, offs...)
		from = offs[len(offs)-1] + 1
	}
	var want []uint64
	for i := range uint64(total) {
		if !damaged[i] {
			want = append(want, i)
		}
	}
	if !equalU64(got, want) {
		t.Fatalf("served %d offsets, want every one but %d..%d (%d)", len(got), damagedBase, damagedBase+uint64(count)-1, len(want))
	}

	// A poll at or inside the damaged range gets the messages after it;
	// one from before it stops before it.
	for _, tc := range []struct {
		from uint64
		want []uint64
	}{
		{damagedBase, span(damagedBase+uint64(count), damagedBase+uint64(count)+4)},
		{damagedBase + 1, span(damagedBase+uint64(count), damagedBase+uint64(count)+4)},
		{damagedBase - 2, span(damagedBase-2, damagedBase-1)},
	} {
		offs := sent.checkPolled(t, r.MustPoll(req(wire.OffsetStrategy(tc.from), 5, false)), 0)
		if !equalU64(offs, tc.want) {
			t.Fatalf("poll from %d: %v, want %v", tc.from, offs, tc.want)
		}
	}

	// A consumer polling next with auto-commit reads through the gap.
	got = got[:0]
	for rounds := 0; rounds <= total; rounds++ {
		offs := sent.checkPolled(t, r.MustPoll(req(wire.NextStrategy(), 250, true)), 0)
		if len(offs) == 0 {
			break
		}
		got = append(got, offs...)
	}
	if !equalU64(got, want) {
		t.Fatalf("consumer got %d offsets, want %d", len(got), len(want))
	}

	if v, ok := sample(scrapeMetrics(t, s2), "iggo_storage_damaged_records"); !ok || v != float64(count) {
		t.Fatalf("iggo_storage_damaged_records = %v (%v), want %d", v, ok, count)
	}

	out := logs.String()
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "damaged") {
			t.Log(line)
		}
	}
	source := "source=open"
	if sealed {
		source = "source=read"
	} else if !strings.Contains(out, "partition has damaged records; serving the rest") {
		t.Fatalf("no damage summary in the log:\n%s", out)
	}
	named := fmt.Sprintf("first_offset=%d last_offset=%d", damagedBase, damagedBase+uint64(count)-1)
	if n := strings.Count(out, named); n != 1 {
		t.Fatalf("the log names offsets %d..%d %d times, want once:\n%s", damagedBase, damagedBase+uint64(count)-1, n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, named) && !strings.Contains(line, source) {
			t.Fatalf("damage logged without %s: %s", source, line)
		}
	}
}

// quarSealedSegmentHolds fails unless the record at offset base is in a
// sealed segment (one that is not the last) of the partition under dir.
func quarSealedSegmentHolds(t *testing.T, dir string, base uint64) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "streams", "*", "topics", "*", "partitions", "*", "*.log"))
	if err != nil || len(logs) < 2 {
		t.Fatalf("want several segments: %v %v", logs, err)
	}
	slices.Sort(logs)
	last := filepath.Base(logs[len(logs)-1])
	if start, err := strconv.ParseUint(strings.TrimSuffix(last, ".log"), 10, 64); err != nil || start <= base {
		t.Fatalf("the last segment %s starts at or before offset %d (%v)", last, base, err)
	}
}
