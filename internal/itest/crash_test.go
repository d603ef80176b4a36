package itest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// crashSettings is the topic the child broker serves: stream 1 topic 1,
// two partitions, enforce_fsync and small segments so rounds roll
// segments.
func crashSettings() wire.TopicSettings {
	s := wire.DefaultTopicSettings()
	s.EnforceFsync = true
	s.SegmentSize = 256 << 10
	return s
}

// acked is one acknowledged batch.
type acked struct {
	partition uint32
	base      uint64
	batch     []byte
}

// producerLoop sends batches until stop is closed or the connection
// breaks, recording every acknowledged one.
func producerLoop(addr string, id int, stop <-chan struct{}, rng *rand.Rand, out *[]acked, mu *sync.Mutex) {
	s := &Server{Addr: addr}
	c, err := s.DialErr()
	if err != nil {
		return
	}
	defer c.Conn.Close()
	c.t = nopTB{}
	if r, _ := c.LoginWith(LoginBody(RootUsername, RootPassword)); r.Session == 0 {
		return
	}
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		part := uint32(rng.IntN(2))
		n := 1 + rng.IntN(40)
		var bb wire.BatchBuilder
		bb.Reset(nil)
		for i := range n {
			payload := fmt.Appendf(nil, "p%d-s%d-m%d-%s", id, seq, i, strings.Repeat("x", rng.IntN(3000)))
			if err := bb.Add(wire.Uint128{Hi: uint64(id), Lo: uint64(seq*1000 + i)}, uint64(time.Now().UnixMicro()), payload, nil); err != nil {
				return
			}
		}
		batch, _ := bb.Finish()
		if err := c.Send(c.SendHeader(wire.OpSendMessages), SendBody(stream1, topic1, wire.PartitioningByID(part), batch)); err != nil {
			return
		}
		f, err := c.Recv()
		if err != nil {
			return
		}
		var r wire.SendMessagesReply
		if f.Kind != wire.KindReply || f.Reply.Status != 0 || r.Decode(f.Body) != nil || len(r.Confirmations) != 1 {
			return
		}
		mu.Lock()
		*out = append(*out, acked{partition: part, base: r.Confirmations[0].BaseOffset, batch: batch})
		mu.Unlock()
	}
}

// nopTB lets the raw client run outside a test goroutine; its helpers that
// would fail the test are not used there.
type nopTB struct{ testing.TB }

func (nopTB) Helper() {}

// verifyAcked checks, on a fresh connection, that every acknowledged batch
// is readable at its offset with identical frames and that every stored
// record of the partitions parts verifies, with contiguous offsets.
func verifyAcked(t *testing.T, addr string, all []acked, parts ...uint32) {
	t.Helper()
	s := &Server{Addr: addr}
	c := s.Dial(t)
	c.LoginRoot()
	consumer := wire.SingleConsumer(wire.NumericID(1))
	for _, part := range parts {
		next := uint64(0)
		for {
			p := c.MustPoll(pollReq(consumer, part, wire.OffsetStrategy(next), 5000, false))
			if p.Count == 0 {
				break
			}
			it := p.Batches()
			for b, ok := it.Next(); ok; b, ok = it.Next() {
				if _, err := wire.ValidateBatch(b.Bytes()); err != nil {
					t.Fatalf("partition %d: stored record at %d does not verify: %v", part, b.BaseOffset(), err)
				}
				ms := b.Messages()
				first, _ := ms.Next()
				if at := b.BaseOffset() + uint64(first.OffsetDelta()); at != next {
					t.Fatalf("partition %d: record at %d, want %d (gap)", part, at, next)
				}
				next += uint64(b.MessageCount())
			}
		}
	}
	for _, a := range all {
		v, _, _ := wire.ParseBatch(a.batch)
		p := c.MustPoll(pollReq(consumer, a.partition, wire.OffsetStrategy(a.base), v.MessageCount(), false))
		want := map[uint64][]byte{}
		ms := v.Messages()
		for m, ok := ms.Next(); ok; m, ok = ms.Next() {
			want[a.base+uint64(m.OffsetDelta())] = m.Bytes()
		}
		got := 0
		it := p.Batches()
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			fs := b.Messages()
			for m, ok := fs.Next(); ok; m, ok = fs.Next() {
				off := b.BaseOffset() + uint64(m.OffsetDelta())
				if !bytes.Equal(want[off], m.Bytes()) {
					t.Fatalf("partition %d offset %d: acknowledged message lost or changed", a.partition, off)
				}
				got++
			}
		}
		if got != len(want) {
			t.Fatalf("partition %d base %d: %d of %d acknowledged messages readable", a.partition, a.base, got, len(want))
		}
	}
}

// TestCrashDuringSends SIGKILLs a broker process during sustained sends
// to an enforce_fsync topic, restarts it, and checks that every
// acknowledged message is readable at its offset and no torn record is
// served. Bounded: crashRounds rounds of a few hundred milliseconds.
func TestCrashDuringSends(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns broker processes")
	}
	const crashRounds = 10
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var all []acked
	var mu sync.Mutex
	for round := range crashRounds {
		ch := startChild(t, dir, childCatalog)
		verifyAcked(t, ch.addr, all, 0, 1)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for id := range 2 {
			prng := rand.New(rand.NewPCG(seed, uint64(round*10+id+2)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				producerLoop(ch.addr, round*10+id, stop, prng, &all, &mu)
			}()
		}
		time.Sleep(time.Duration(100+rng.IntN(300)) * time.Millisecond)
		ch.kill(t)
		close(stop)
		wg.Wait()
		if t.Failed() {
			t.Logf("child stderr: %s", ch.stderr.String())
			return
		}
	}
	ch := startChild(t, dir, childCatalog)
	defer ch.kill(t)
	verifyAcked(t, ch.addr, all, 0, 1)
	if len(all) == 0 {
		t.Fatal("no batch was acknowledged")
	}
	t.Logf("%d rounds, %d acknowledged batches verified", crashRounds, len(all))
}

// segmentFiles lists the .log or .index files of a partition directory.
func segmentFiles(t *testing.T, dir, ext string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryAfterTruncation truncates segment and index files of
// partition 0 at random positions and restarts the broker on the damaged
// copy: a torn active segment is cut back to its last complete batch
// (every acknowledged batch before the cut is served unchanged, sends
// continue after it), a damaged index is rebuilt, and the cut records of
// a damaged sealed segment are quarantined (everything else is served)
// or, when nothing tells which offsets were cut (a cut at a record
// boundary), partition 0 only is stopped (4011 on polls, 4010 on sends);
// partition 1 is served either way.
func TestRecoveryAfterTruncation(t *testing.T) {
	settings := wire.DefaultTopicSettings()
	settings.SegmentSize = 64 << 10
	base := t.TempDir()
	var all []acked
	func() {
		s := startWithTopic(t, 2, settings, WithDir(base))
		c := s.Dial(t)
		c.LoginRoot()
		for i := range 60 {
			part := uint32(i % 2)
			b := Batch(t, uint64(i*100), Payloads(1+i%7, 900+i*13, "t")...)
			conf := c.MustSend(stream1, topic1, wire.PartitioningByID(part), b)
			all = append(all, acked{partition: part, base: conf.BaseOffset, batch: b})
		}
		ctx, cancel := contextWithTimeout(10 * time.Second)
		defer cancel()
		if err := s.Broker.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	partDir := filepath.Join("streams", "1", "topics", "1-1", "partitions", "0")
	logs := segmentFiles(t, filepath.Join(base, partDir), ".log")
	idxs := segmentFiles(t, filepath.Join(base, partDir), ".index")
	if len(logs) < 3 {
		t.Fatalf("want several segments, have %d", len(logs))
	}
	type trial struct {
		name string
		file string
	}
	trials := []trial{
		{"active log", logs[len(logs)-1]},
		{"active index", idxs[len(idxs)-1]},
		{"sealed index", idxs[rng.IntN(len(idxs)-1)]},
		{"sealed log", logs[rng.IntN(len(logs)-1)]},
	}
	for _, tr := range trials {
		for k := range 2 {
			t.Run(fmt.Sprintf("%s %d", tr.name, k), func(t *testing.T) {
				dir := t.TempDir()
				copyDir(t, base, dir)
				target := filepath.Join(dir, partDir, filepath.Base(tr.file))
				st, err := os.Stat(target)
				if err != nil {
					t.Fatal(err)
				}
				if st.Size() == 0 {
					t.Skip("empty file")
				}
				cut := rng.Int64N(st.Size())
				if err := os.Truncate(target, cut); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s truncated from %d to %d bytes", filepath.Base(target), st.Size(), cut)
				s := startWithTopic(t, 2, settings, WithDir(dir))
				c := s.Dial(t)
				c.LoginRoot()
				consumer := wire.SingleConsumer(wire.NumericID(1))
				if tr.name == "sealed log" {
					var part1 []acked
					for _, a := range all {
						if a.partition == 1 {
							part1 = append(part1, a)
						}
					}
					verifyAcked(t, s.Addr, part1, 1)
					_, f := c.Poll(pollReq(consumer, 0, wire.FirstStrategy(), 10, false))
					if f.Kind == wire.KindReply && f.Reply.Status == wire.ErrCannotReadMessage.Code {
						// Cut at a record boundary or to nothing: no
						// bytes say which offsets are gone, so the
						// partition is stopped.
						ExpectStatus(t, c.SendMessages(SendBody(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, []byte("x")))), wire.ErrCannotAppendMessage.Code)
						return
					}
					// The cut records are quarantined: everything else is
					// served, and only offsets of the cut segment are gone.
					first, end := segmentSpan(t, logs, filepath.Base(tr.file))
					checkServedAround(t, c, all, 0, first, end)
					return
				}
				// Partition 0 serves a prefix of what was acknowledged.
				p := c.MustPoll(pollReq(consumer, 0, wire.FirstStrategy(), 1<<20, false))
				end := p.CurrentOffset + 1
				if p.Count == 0 {
					end = 0
				}
				var kept []acked
				for _, a := range all {
					v, _, _ := wire.ParseBatch(a.batch)
					if a.partition == 1 || a.base+uint64(v.MessageCount()) <= end {
						kept = append(kept, a)
					}
				}
				if tr.name != "active log" && len(kept) != len(all) {
					t.Fatalf("index damage lost data: %d of %d batches kept", len(kept), len(all))
				}
				verifyAcked(t, s.Addr, kept, 0, 1)
				conf := c.MustSend(stream1, topic1, wire.PartitioningByID(0), Batch(t, 7, []byte("after")))
				if conf.BaseOffset != end {
					t.Fatalf("send after recovery at %d, want %d", conf.BaseOffset, end)
				}
			})
		}
	}
}

// segmentSpan returns the first offset of the segment log name among logs
// (the sorted log paths of a partition) and the first offset of the next
// one.
func segmentSpan(t *testing.T, logs []string, name string) (first, end uint64) {
	t.Helper()
	startOf := func(p string) uint64 {
		v, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".log"), 10, 64)
		if err != nil {
			t.Fatalf("segment name %s: %v", p, err)
		}
		return v
	}
	for i, l := range logs {
		if filepath.Base(l) == name && i+1 < len(logs) {
			return startOf(l), startOf(logs[i+1])
		}
	}
	t.Fatalf("no sealed segment %s", name)
	return 0, 0
}

// checkServedAround polls every message of partition part, continuing
// after what comes back (quarantined offsets are skipped), and checks that
// every served message is the acknowledged one at its offset and that
// every acknowledged message not served lies in [first, end).
func checkServedAround(t *testing.T, c *Client, all []acked, part uint32, first, end uint64) {
	t.Helper()
	consumer := wire.SingleConsumer(wire.NumericID(1))
	served := map[uint64][]byte{}
	for next := uint64(0); ; {
		p := c.MustPoll(pollReq(consumer, part, wire.OffsetStrategy(next), 5000, false))
		if p.Count == 0 {
			break
		}
		it := p.Batches()
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if _, err := wire.ValidateBatch(b.Bytes()); err != nil {
				t.Fatalf("stored record at %d does not verify: %v", b.BaseOffset(), err)
			}
			ms := b.Messages()
			for m, ok := ms.Next(); ok; m, ok = ms.Next() {
				off := b.BaseOffset() + uint64(m.OffsetDelta())
				served[off] = bytes.Clone(m.Bytes())
				next = off + 1
			}
		}
	}
	missing := 0
	for _, a := range all {
		if a.partition != part {
			continue
		}
		v, _, _ := wire.ParseBatch(a.batch)
		ms := v.Messages()
		for m, ok := ms.Next(); ok; m, ok = ms.Next() {
			off := a.base + uint64(m.OffsetDelta())
			got, ok := served[off]
			switch {
			case ok && !bytes.Equal(got, m.Bytes()):
				t.Fatalf("offset %d: served message differs from the acknowledged one", off)
			case !ok && (off < first || off >= end):
				t.Fatalf("offset %d missing, outside the damaged segment %d..%d", off, first, end-1)
			case !ok:
				missing++
			}
		}
	}
	t.Logf("%d messages of the damaged segment %d..%d quarantined", missing, first, end-1)
}
