package itest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// Damage found in a running server: a byte flipped in a sealed segment is
// reported by VERIFY_PARTITION (exactly that record's range) and found by
// the background scrubber, which counts it in /metrics; polls skip the
// damaged offsets and serve every other record (docs/OPERATIONS.md,
// "Scrubbing and verification").

// scrubTopic is the topic of these tests: two partitions, 1 MiB segments
// (the smallest), so that a few MiB of messages fill several segments.
const (
	scrubMessages     = 16
	scrubPayloadBytes = 4 << 10
	scrubBatches      = 60
)

// scrubFixture creates stream "scrub" with topic "t" and fills partition
// 1 with scrubBatches records over several segments; partition 0 gets a
// few records.
func scrubFixture(t *testing.T, c *client.Client) (stream, topic uint32) {
	t.Helper()
	ctx := obsCtx(t)
	st, err := c.CreateStream(ctx, "scrub")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := c.CreateTopic(ctx, wire.NumericID(st.ID), "t", 2, wire.Uint64Option(wire.TopicOptSegmentSize, wire.MinSegmentSize))
	if err != nil {
		t.Fatal(err)
	}
	send := func(part uint32, batches int) {
		for b := range batches {
			msgs := make([]wire.Message, scrubMessages)
			for i := range msgs {
				msgs[i] = wire.Message{ID: client.NewMessageID(), Payload: bytes.Repeat([]byte{byte('a' + (b+i)%26)}, scrubPayloadBytes)}
			}
			if _, err := c.SendMessages(ctx, wire.NumericID(st.ID), wire.NumericID(tp.ID), wire.PartitioningByID(part), msgs); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(0, 3)
	send(1, scrubBatches)
	return st.ID, tp.ID
}

// flipSealed flips a byte in the third record of partition's first
// (sealed) segment.
func flipSealed(t *testing.T, s *Server, stream, topic, partition uint32) DamagedRecord {
	t.Helper()
	segs := Segments(t, s.PartitionDir(t, stream, topic, partition))
	if len(segs) < 3 {
		t.Fatalf("partition %d has %d segments, want at least 3", partition, len(segs))
	}
	return FlipRecordByte(t, s.Dir, segs[0], 2)
}

// wantDamage checks a partition's verification: checked, with exactly
// the damaged record want.
func wantDamage(t *testing.T, p wire.PartitionVerify, want DamagedRecord) {
	t.Helper()
	if p.Status != wire.VerifyChecked || p.Segments < 2 || p.Records == 0 || p.Bytes == 0 {
		t.Fatalf("partition %d: %+v", p.PartitionID, p)
	}
	if len(p.Damaged) != 1 {
		t.Fatalf("partition %d: damaged %+v, want one range %+v", p.PartitionID, p.Damaged, want)
	}
	d := p.Damaged[0]
	got := DamagedRecord{File: d.File, Pos: d.Pos, Len: d.Len, First: d.First, Last: d.Last}
	if got != want || d.Reason == "" {
		t.Fatalf("partition %d: damaged range %+v (reason %q), want %+v", p.PartitionID, got, d.Reason, want)
	}
}

func TestVerifyPartitionFindsFlippedByte(t *testing.T) {
	s, api := startHTTP(t, WithConfig(func(c *config.Config) { c.Storage.ScrubInterval = 0 }))
	c := obsClient(t, s)
	stream, topic := scrubFixture(t, c)
	sid, tid := wire.NumericID(stream), wire.NumericID(topic)

	r, err := c.VerifyPartition(obsCtx(t), sid, tid, wire.OptPartition{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Partitions) != 2 {
		t.Fatalf("partitions %+v", r.Partitions)
	}
	for _, p := range r.Partitions {
		if p.Status != wire.VerifyChecked || len(p.Damaged) != 0 {
			t.Fatalf("before the flip: %+v", p)
		}
	}
	if r.Partitions[1].Segments < 2 || r.Partitions[1].Bytes < 2*wire.MinSegmentSize {
		t.Fatalf("partition 1 checked %+v, want its sealed segments", r.Partitions[1])
	}

	want := flipSealed(t, s, stream, topic, 1)
	r, err = c.VerifyPartition(obsCtx(t), sid, tid, wire.SomePartition(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Partitions) != 1 || r.Partitions[0].PartitionID != 1 {
		t.Fatalf("one partition asked, got %+v", r.Partitions)
	}
	wantDamage(t, r.Partitions[0], want)
	fams := scrapeMetrics(t, s)
	if v := mustSample(t, fams, "iggo_storage_damage_found_total", "source", "scrub"); v != 1 {
		t.Fatalf("damage found by scrub: %v, want 1", v)
	}
	if v := mustSample(t, fams, "iggo_storage_scrub_bytes_total"); v < 2*float64(wire.MinSegmentSize) {
		t.Fatalf("scrub bytes %v", v)
	}

	// Asked again, the range is still reported (quarantined), not found
	// anew.
	r, err = c.VerifyPartition(obsCtx(t), sid, tid, wire.OptPartition{})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Partitions[0]; len(p.Damaged) != 0 {
		t.Fatalf("partition 0 damaged: %+v", p)
	}
	wantDamage(t, r.Partitions[1], want)
	if v := mustSample(t, scrapeMetrics(t, s), "iggo_storage_damage_found_total", "source", "scrub"); v != 1 {
		t.Fatalf("damage found by scrub after a second verification: %v, want still 1", v)
	}

	// The same over HTTP.
	var hv struct {
		Partitions []struct {
			Partition uint32 `json:"partition"`
			Status    string `json:"status"`
			Damaged   []struct {
				First    uint64 `json:"first_offset"`
				Last     uint64 `json:"last_offset"`
				File     string `json:"file"`
				Position uint64 `json:"position"`
				Bytes    uint64 `json:"bytes"`
				Reason   string `json:"reason"`
			} `json:"damaged"`
		} `json:"partitions"`
	}
	path := fmt.Sprintf("/streams/%d/topics/%d/partitions/verify", stream, topic)
	api.ok(200, &hv, "POST", path+"?partition_id=1", nil)
	if len(hv.Partitions) != 1 || hv.Partitions[0].Status != "checked" || len(hv.Partitions[0].Damaged) != 1 {
		t.Fatalf("HTTP verify %+v", hv)
	}
	if d := hv.Partitions[0].Damaged[0]; (DamagedRecord{File: d.File, Pos: d.Position, Len: d.Bytes, First: d.First, Last: d.Last}) != want || d.Reason == "" {
		t.Fatalf("HTTP damaged range %+v, want %+v", d, want)
	}
	api.ok(200, &hv, "POST", path, nil)
	if len(hv.Partitions) != 2 {
		t.Fatalf("HTTP verify of the topic %+v", hv)
	}
	api.fail(404, wire.ErrPartitionNotFound.Code, "POST", path+"?partition_id=7", nil)

	// Errors: an unknown partition, an unknown topic, a user without
	// manage_topic.
	if _, err := c.VerifyPartition(obsCtx(t), sid, tid, wire.SomePartition(7)); !errors.Is(err, wire.ErrPartitionNotFound) {
		t.Fatalf("unknown partition: %v", err)
	}
	if _, err := c.VerifyPartition(obsCtx(t), sid, wire.NamedID("nope"), wire.OptPartition{}); !errors.Is(err, wire.ErrTopicIDNotFound) {
		t.Fatalf("unknown topic: %v", err)
	}
	perms := &wire.Permissions{Global: wire.GlobalPermissions{PollMessages: true, ReadTopics: true}}
	if _, err := c.CreateUser(obsCtx(t), "reader", "reader-pass", wire.UserActive, perms); err != nil {
		t.Fatal(err)
	}
	rc, err := client.Dial(obsCtx(t), s.Addr, client.WithCredentials("reader", "reader-pass"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.VerifyPartition(obsCtx(t), sid, tid, wire.OptPartition{}); !errors.Is(err, wire.ErrUnauthorized) {
		t.Fatalf("reader verifies: %v", err)
	}
	api.as(newHTTPAPI(t, s).login("reader", "reader-pass")).fail(403, wire.ErrUnauthorized.Code, "POST", path, nil)
}

func TestScrubberFindsFlippedByte(t *testing.T) {
	s := Start(t, WithConfig(func(c *config.Config) {
		c.Storage.ScrubInterval = config.Duration(200 * time.Millisecond)
	}))
	c := obsClient(t, s)
	stream, topic := scrubFixture(t, c)
	// Let one pass see the intact data first.
	waitScrub(t, s, "a first scrub pass", func(passes, found float64) bool { return passes >= 1 })
	if v := mustSample(t, scrapeMetrics(t, s), "iggo_storage_damage_found_total", "source", "scrub"); v != 0 {
		t.Fatalf("damage found before the flip: %v", v)
	}

	want := flipSealed(t, s, stream, topic, 1)
	waitScrub(t, s, "the scrubber to find the flipped byte", func(_, found float64) bool { return found >= 1 })

	r, err := c.VerifyPartition(obsCtx(t), wire.NumericID(stream), wire.NumericID(topic), wire.SomePartition(1))
	if err != nil {
		t.Fatal(err)
	}
	wantDamage(t, r.Partitions[0], want)
	if v := mustSample(t, scrapeMetrics(t, s), "iggo_storage_damage_found_total", "source", "scrub"); v != 1 {
		t.Fatalf("damage found: %v, want 1 (the verification found nothing new)", v)
	}

	// A poll from the start serves every record but the damaged ones.
	next, served := uint64(0), map[uint64]bool{}
	for range 1000 {
		res, err := c.PollMessages(obsCtx(t), wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: wire.NumericID(stream), TopicID: wire.NumericID(topic),
			Partition: wire.SomePartition(1), Strategy: wire.OffsetStrategy(next), Count: 100,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Count == 0 {
			break
		}
		it := res.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			served[m.Offset] = true
			next = m.Offset + 1
		}
	}
	for off := uint64(0); off < scrubBatches*scrubMessages; off++ {
		damaged := off >= want.First && off <= want.Last
		if served[off] == damaged {
			t.Fatalf("offset %d served %v, damaged %v (range %d..%d)", off, served[off], damaged, want.First, want.Last)
		}
	}
}

// waitScrub waits until cond holds for the scrubber's passes and the
// damage it found, scraped from /metrics.
func waitScrub(t *testing.T, s *Server, what string, cond func(passes, found float64) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		fams := scrapeMetrics(t, s)
		passes := mustSample(t, fams, "iggo_storage_scrub_passes_total")
		found := mustSample(t, fams, "iggo_storage_damage_found_total", "source", "scrub")
		if cond(passes, found) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s (passes %v, found %v)", what, passes, found)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
