package itest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredEncryptedUploadsCiphertext: an encrypted partition's sealed
// segments go to the bucket as stored, ciphertext; no object holds a
// payload or a header in the clear, and polls from offset 0, served from
// the bucket, return the plaintext.
func TestTieredEncryptedUploadsCiphertext(t *testing.T) {
	srv := objstoretest.Start(t)
	s := Start(t, withEncryption(encKey(3)), WithConfig(func(c *config.Config) {
		ts := &c.TieredStorage
		ts.Enabled = true
		ts.Endpoint, ts.Region, ts.Bucket, ts.Prefix = srv.Endpoint, srv.Region, srv.Bucket, "enc"
		ts.AccessKeyID, ts.SecretAccessKey = config.Secret(srv.AccessKey), config.Secret(srv.SecretKey)
		ts.LocalRetentionSize = 0
		ts.UploadInterval = config.Duration(50 * time.Millisecond)
	}))
	c := encClient(t, s)
	ctx := encCtx(t)
	if _, err := c.CreateStream(ctx, "vault"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, encStream, "secrets", 1, wire.StringOption(wire.TopicOptSegmentSize, "1 MiB")); err != nil {
		t.Fatal(err)
	}
	const n = 1500 // 2 KiB each: two sealed segments and more
	payload := func(i int) []byte {
		return append([]byte(fmt.Sprintf("top-secret-%06d-", i)), bytes.Repeat([]byte("classified"), 200)...)
	}
	for b := range n / 100 {
		msgs := make([]wire.Message, 100)
		for i := range msgs {
			msgs[i] = wire.Message{ID: client.NewMessageID(), Payload: payload(b*100 + i)}
		}
		if _, err := c.SendMessages(ctx, encStream, encTopic, wire.PartitioningByID(0), msgs); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "sealed segments uploaded and dropped locally", func() bool {
		tiers, err := c.PartitionTiers(ctx, encStream, encTopic)
		return err == nil && len(tiers) == 1 && tiers[0].RemoteSegments >= 2 && tiers[0].RemoteOnlyBytes == tiers[0].RemoteBytes && tiers[0].PendingSegments == 0
	})
	var objects int
	err := filepath.WalkDir(filepath.Join(srv.Dir, srv.Bucket), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objects++
		if bytes.Contains(b, []byte("top-secret-")) || bytes.Contains(b, []byte("classified")) {
			t.Errorf("object %s holds a payload in the clear", path)
		}
		return nil
	})
	if err != nil || objects < 2 {
		t.Fatalf("%d log objects in the bucket, %v", objects, err)
	}
	// Every message from offset 0, most of them from the bucket.
	next := uint64(0)
	for range 1000 {
		res, err := c.PollMessages(ctx, wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: encStream, TopicID: encTopic,
			Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(next), Count: 100,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Count == 0 {
			break
		}
		it := res.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if m.Offset != next || !bytes.Equal(m.Payload, payload(int(next))) {
				t.Fatalf("offset %d (want %d): payload differs", m.Offset, next)
			}
			next++
		}
	}
	if next != n {
		t.Fatalf("polled %d messages, want %d", next, n)
	}
}
