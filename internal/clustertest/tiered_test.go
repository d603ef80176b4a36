//go:build !windows

package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/internal/tier"
	"github.com/iggo-dev/iggo/wire"
)

// tieredMessages is the message count of one batch of the tiered test;
// each payload is 1000 bytes derived from its offset.
const tieredMessages = 100

// tieredPayload is the payload of the message at offset off.
func tieredPayload(off uint64) []byte {
	p := bytes.Repeat([]byte{byte('a' + off%26)}, 1000)
	copy(p, fmt.Sprintf("offset-%020d", off))
	return p
}

// tieredBatch builds the batch of the messages from offset base on.
func tieredBatch(t *testing.T, base uint64) []byte {
	t.Helper()
	var b wire.BatchBuilder
	b.Reset(nil)
	for i := range uint64(tieredMessages) {
		if err := b.Add(wire.Uint128{Lo: base + i + 1}, uint64(time.Now().UnixMicro()), tieredPayload(base+i), nil); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestTieredCluster: with tiered storage on a 3-node cluster of real
// processes and a real S3-compatible store, the partition's leader
// uploads its sealed segments once, every replica learns of them through
// the partition's log and drops its local copies (local retention 0),
// every node serves the whole partition from offset 0 byte for byte, and
// after the leader is killed the new leader still does, and uploads what
// is sealed next. A replica wiped and restarted catches up with the local
// segments only and reads the rest from the bucket.
func TestTieredCluster(t *testing.T) {
	srv := objstoretest.Start(t)
	for k, v := range map[string]string{
		"IGGY_TIERED_STORAGE_ENABLED":              "true",
		"IGGY_TIERED_STORAGE_ENDPOINT":             srv.Endpoint,
		"IGGY_TIERED_STORAGE_BUCKET":               srv.Bucket,
		"IGGY_TIERED_STORAGE_PREFIX":               "cluster",
		"IGGY_TIERED_STORAGE_ACCESS_KEY_ID":        srv.AccessKey,
		"IGGY_TIERED_STORAGE_SECRET_ACCESS_KEY":    srv.SecretKey,
		"IGGY_TIERED_STORAGE_LOCAL_RETENTION_SIZE": "0",
		"IGGY_TIERED_STORAGE_UPLOAD_INTERVAL":      "100 ms",
	} {
		t.Setenv(k, v)
	}
	h := StartCluster(t, 3)
	c, leader := h.DialLeader()
	if _, err := c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}); err != nil {
		t.Fatalf("create stream on node %d: %v", leader, err)
	}
	opts := wire.Options{wire.StringOption(wire.TopicOptSegmentSize, "1 MiB")}
	if _, err := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 1, Name: "t", Options: opts}); err != nil {
		t.Fatalf("create topic on node %d: %v", leader, err)
	}
	c.Close()
	var next uint64
	send := func(batches int) {
		t.Helper()
		for range batches {
			var err error
			for attempt := 0; attempt < 50; attempt++ {
				pl := partitionLeader(t, h)
				var conn *local.Conn
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				conn, err = local.DialLogin(ctx, h.Addr(pl))
				cancel()
				if err == nil {
					var base uint64
					base, err = conn.Send(wire.NamedID("s"), wire.NamedID("t"), 0, tieredBatch(t, next))
					conn.Close()
					if err == nil && base != next {
						t.Fatalf("batch stored at %d, want %d", base, next)
					}
				}
				if err == nil {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("send at offset %d: %v", next, err)
			}
			next += tieredMessages
		}
	}
	send(45) // about 4.5 MB: four sealed segments of 1 MiB and more

	// Every replica lists the uploaded segments and keeps no sealed one.
	waitTiered(t, h, []int{0, 1, 2})
	checkBucket(t, srv, h)
	for i := range h.N() {
		readTiered(t, h, i, next)
	}

	// The leader goes: the new one serves the bucket's part and uploads.
	pl := partitionLeader(t, h)
	h.Kill(pl)
	rest := []int{(pl + 1) % 3, (pl + 2) % 3}
	send(25)
	waitTiered(t, h, rest)
	for _, i := range rest {
		readTiered(t, h, i, next)
	}
	checkBucket(t, srv, h)

	// The old leader comes back wiped: it catches up from the others,
	// with the local segments only (its log starts past offset 0).
	h.Restart(pl, true)
	waitTiered(t, h, []int{0, 1, 2})
	dir, man, _, err := tieredState(h, pl)
	if err != nil {
		t.Fatal(err)
	}
	files := segmentFiles(dir)
	if len(files) == 0 || filepath.Base(files[0]) == fmt.Sprintf("%020d.log", 0) {
		t.Fatalf("node %d caught up with segments %v: the bucket's part was copied", pl, files)
	}
	t.Logf("node %d after its catch-up: %d segments in the bucket, local segments %v", pl, len(man.Segments), files)
	readTiered(t, h, pl, next)
	checkBucket(t, srv, h)
}

// waitTiered waits until every node of nodes has no sealed segment left
// on local disk that its manifest does not list, and lists some.
func waitTiered(t *testing.T, h *Harness, nodes []int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, i := range nodes {
		for {
			dir, man, sealed, err := tieredState(h, i)
			if err == nil && len(man.Segments) > 0 && sealed == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: %s: %d segments in the bucket, %d sealed local ones left (%v)", i, dir, len(man.Segments), sealed, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// tieredState reads node i's partition directory: its manifest and how
// many sealed segments it still holds locally.
func tieredState(h *Harness, i int) (string, tier.Manifest, int, error) {
	dirs := h.partitionDirs(i)
	if len(dirs) != 1 {
		return "", tier.Manifest{}, 0, fmt.Errorf("partitions %v", dirs)
	}
	dir := filepath.Join(h.Layout.DataDir(i), "streams", dirs[0])
	man, err := tier.ReadManifest(dir)
	return dir, man, max(len(segmentFiles(dir))-1, 0), err
}

// readTiered polls the whole partition from offset 0 through node i and
// checks every message.
func readTiered(t *testing.T, h *Harness, i int, end uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	c, err := local.DialLogin(ctx, h.Addr(i))
	cancel()
	if err != nil {
		t.Fatalf("node %d: %v", i, err)
	}
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for off := uint64(0); off < end; {
		got, err := c.Poll(wire.NamedID("s"), wire.NamedID("t"), 0, off, 1000)
		if err != nil || got.Count == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("node %d: poll at %d: %d messages, %v", i, off, got.Count, err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		it := got.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if m.Offset != off {
				t.Fatalf("node %d: offset %d where %d was expected", i, m.Offset, off)
			}
			if !bytes.Equal(m.Payload, tieredPayload(off)) {
				t.Fatalf("node %d: payload of offset %d differs", i, off)
			}
			off++
		}
	}
}

// checkBucket checks that the bucket holds one log and one index object
// per segment any node's manifest lists, and nothing else but the
// ownership marker.
func checkBucket(t *testing.T, srv *objstoretest.Server, h *Harness) {
	t.Helper()
	st, err := objstore.New(srv.Config("cluster"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := st.List(context.Background(), st.Key("streams/"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for i := range h.N() {
		if _, man, _, err := tieredState(h, i); err == nil {
			for _, s := range man.Segments {
				listed[s.Key], listed[tier.IndexKey(s.Key)] = true, true
			}
		}
	}
	seen := map[string]bool{}
	for _, o := range objs {
		if seen[o.Key] {
			t.Fatalf("object %s listed twice", o.Key)
		}
		seen[o.Key] = true
		if !listed[o.Key] && !strings.HasSuffix(o.Key, objstore.OwnerMarker) {
			t.Errorf("object %s is in no manifest", o.Key)
		}
	}
	for k := range listed {
		if !seen[k] {
			t.Errorf("object %s listed in a manifest is not in the bucket", k)
		}
	}
}
