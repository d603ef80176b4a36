package itest

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// Encryption at rest (docs/ENCRYPTION.md) through real connections: the
// Go SDK sends plaintext, the data directory holds none of it, polls
// (single consumer and consumer group) return plaintext with headers and
// checksums intact, a restart with the same key reads it all, and a
// different key or disabled encryption refuses to start.

var (
	encStream = wire.NamedID("vault")
	encTopic  = wire.NamedID("secrets")
)

// encKey is a fixed test key (standard base64 of 32 bytes).
func encKey(seed byte) string {
	k := make([]byte, 32)
	for i := range k {
		k[i] = seed ^ byte(i*7)
	}
	return base64.StdEncoding.EncodeToString(k)
}

func withEncryption(key string) Option {
	return WithConfig(func(c *config.Config) {
		c.System.Encryption = config.EncryptionConfig{Enabled: true, Key: config.Secret(key)}
	})
}

func encCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func encClient(t *testing.T, s *Server) *client.Client {
	t.Helper()
	c, err := client.Dial(encCtx(t), s.Addr, client.WithCredentials(RootUsername, RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// encPayload is message i's payload: a marker no file may contain.
func encPayload(i int) string { return "top-secret-payload-" + strconv.Itoa(i) + "-end" }

const encHeaderValue = "confidential-header-value"

// encPolled reads partition p from offset 0 with a single consumer and
// returns "payload|header" strings; every record must pass the admission
// checks (layout and checksums over the plaintext).
func encPolled(t *testing.T, c *client.Client, p uint32) []string {
	t.Helper()
	var out []string
	next := uint64(0)
	for range 100 {
		res, err := c.PollMessages(encCtx(t), wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: encStream, TopicID: encTopic,
			Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(next), Count: 7,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Count == 0 {
			return out
		}
		out = append(out, encRecords(t, res)...)
		next += uint64(res.Count)
	}
	t.Fatal("poll loop did not end")
	return nil
}

// encRecords checks and flattens the records of one poll reply.
func encRecords(t *testing.T, res *wire.PolledMessages) []string {
	t.Helper()
	bi := res.Batches()
	for b, ok := bi.Next(); ok; b, ok = bi.Next() {
		if _, err := wire.ValidateBatch(b.Bytes()); err != nil {
			t.Fatalf("polled record fails admission checks: %v", err)
		}
	}
	var out []string
	it := res.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		s := string(m.Payload)
		if len(m.UserHeaders) > 0 {
			var h wire.UserHeaders
			if err := h.Decode(m.UserHeaders); err != nil {
				t.Fatalf("user headers of offset %d: %v", m.Offset, err)
			}
			s += "|" + string(h[0].Key.Data) + "=" + string(h[0].Value.Data)
		}
		out = append(out, s)
	}
	return out
}

// encWant is what encSend(n) stored: even messages carry a header.
func encWant(n int) []string {
	var out []string
	for i := range n {
		s := encPayload(i)
		if i%2 == 0 {
			s += "|trace=" + encHeaderValue
		}
		out = append(out, s)
	}
	return out
}

func encSend(t *testing.T, c *client.Client, partition uint32, n int) {
	t.Helper()
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("trace"), Value: wire.StringHeader(encHeaderValue)}}.AppendTo(nil)
	var msgs []wire.Message
	for i := range n {
		m := wire.Message{ID: client.NewMessageID(), Payload: []byte(encPayload(i))}
		if i%2 == 0 {
			m.UserHeaders = hdrs
		}
		msgs = append(msgs, m)
	}
	// Two batches, so polls of 7 start and end inside stored records.
	half := n / 2
	for _, part := range [][]wire.Message{msgs[:half], msgs[half:]} {
		if _, err := c.SendMessages(encCtx(t), encStream, encTopic, wire.PartitioningByID(partition), part); err != nil {
			t.Fatal(err)
		}
	}
}

// grepDir returns the files under dir that contain needle.
func grepDir(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			hits = append(hits, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// encStartErr runs broker.New over dir the way Start would and returns
// its error (the broker, if it started, is shut down).
func encStartErr(t *testing.T, dir string, edit func(*config.Config)) error {
	t.Helper()
	cfg := config.Default()
	cfg.System.Path = dir
	cfg.TCP.Address = "127.0.0.1:0"
	cfg.QUIC.Enabled, cfg.WebSocket.Enabled, cfg.HTTP.Enabled = false, false, false
	edit(&cfg)
	b, err := broker.New(cfg, broker.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		broker.WithPasswordParams(TestPasswordParams), broker.WithRootCredentials(RootUsername, RootPassword))
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	}
	return err
}

func TestEncryptionAtRest(t *testing.T) {
	dir := t.TempDir()
	key := encKey(1)
	const perPartition = 20
	s1 := Start(t, WithDir(dir), withEncryption(key))
	c := encClient(t, s1)
	ctx := encCtx(t)
	if _, err := c.CreateStream(ctx, "vault"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, encStream, "secrets", 2); err != nil {
		t.Fatal(err)
	}
	for p := range uint32(2) {
		encSend(t, c, p, perPartition)
	}
	want := strings.Join(encWant(perPartition), "\n")
	for p := range uint32(2) {
		if got := strings.Join(encPolled(t, c, p), "\n"); got != want {
			t.Fatalf("partition %d polled:\n%s\nwant:\n%s", p, got, want)
		}
	}

	// Consumer group with auto-commit: offsets are message offsets, as
	// without encryption.
	group := wire.NamedID("readers")
	if _, err := c.CreateConsumerGroup(ctx, encStream, encTopic, "readers"); err != nil {
		t.Fatal(err)
	}
	if err := c.JoinConsumerGroup(ctx, encStream, encTopic, group); err != nil {
		t.Fatal(err)
	}
	a, err := c.SyncConsumerGroup(ctx, encStream, encTopic, group)
	if err != nil || a == nil || len(a.Partitions) != 2 {
		t.Fatalf("assignment %+v, %v", a, err)
	}
	for _, p := range a.Partitions {
		var got []string
		for range 10 {
			res, err := c.PollMessages(ctx, wire.PollMessages{
				Consumer: wire.GroupConsumer(group), StreamID: encStream, TopicID: encTopic,
				Partition: wire.SomePartition(p), Strategy: wire.NextStrategy(), Count: 6, AutoCommit: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Count == 0 {
				break
			}
			got = append(got, encRecords(t, res)...)
		}
		if strings.Join(got, "\n") != want {
			t.Fatalf("group poll of partition %d:\n%s", p, strings.Join(got, "\n"))
		}
		off, err := c.GetConsumerOffset(ctx, wire.GroupConsumer(group), encStream, encTopic, wire.SomePartition(p))
		if err != nil || off == nil || off.StoredOffset != perPartition-1 || off.CurrentOffset != perPartition-1 {
			t.Fatalf("group offset of partition %d: %+v, %v", p, off, err)
		}
	}
	// A stored single-consumer offset drives a Next poll.
	single := wire.SingleConsumer(wire.NumericID(5))
	if err := c.StoreConsumerOffset(ctx, single, encStream, encTopic, wire.SomePartition(1), 16); err != nil {
		t.Fatal(err)
	}
	res, err := c.PollMessages(ctx, wire.PollMessages{Consumer: single, StreamID: encStream, TopicID: encTopic,
		Partition: wire.SomePartition(1), Strategy: wire.NextStrategy(), Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := encRecords(t, res); strings.Join(got, "\n") != strings.Join(encWant(perPartition)[17:], "\n") {
		t.Fatalf("Next after offset 16: %q", got)
	}

	s1.Stop() // flushes every partition
	// The data directory (segments, indexes, metadata, the runtime
	// configuration) holds no payload, no header value and not the key.
	for _, needle := range []string{encPayload(0), encPayload(perPartition - 1), "top-secret-payload-", encHeaderValue, key} {
		if hits := grepDir(t, dir, []byte(needle)); len(hits) > 0 {
			t.Fatalf("%q found in %v", needle, hits)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "streams", "*", "topics", "*", "partitions", "*", "*.log"))
	if len(logs) != 2 {
		t.Fatalf("segment files %v", logs)
	}
	for _, l := range logs {
		if st, err := os.Stat(l); err != nil || st.Size() < int64(perPartition*len(encPayload(0))) {
			t.Fatalf("segment %s: %v, %v", l, st, err)
		}
	}

	// Restart with the same key: everything reads back.
	s2 := Start(t, WithDir(dir), withEncryption(key))
	c2 := encClient(t, s2)
	for p := range uint32(2) {
		if got := strings.Join(encPolled(t, c2, p), "\n"); got != want {
			t.Fatalf("after restart, partition %d:\n%s", p, got)
		}
	}
	off, err := c2.GetConsumerOffset(encCtx(t), wire.GroupConsumer(group), encStream, encTopic, wire.SomePartition(0))
	if err != nil || off == nil || off.StoredOffset != perPartition-1 {
		t.Fatalf("group offset after restart: %+v, %v", off, err)
	}
	s2.Stop()

	// Another key, and encryption disabled: refused with one line naming
	// the key and a partition path.
	partDir := filepath.Join(dir, "streams")
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		want string
	}{
		{"other key", func(c *config.Config) {
			c.System.Encryption = config.EncryptionConfig{Enabled: true, Key: config.Secret(encKey(2))}
		}, "was encrypted with another key"},
		{"disabled", func(c *config.Config) {}, "is encrypted (key fingerprint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := encStartErr(t, dir, tc.edit)
			if err == nil {
				t.Fatal("broker started")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "system.encryption.key: partition data at "+partDir) || !strings.Contains(msg, tc.want) ||
				!strings.Contains(msg, "start with") || strings.Contains(msg, "\n") {
				t.Fatalf("refusal %q, want one line naming system.encryption.key, a path under %s and %q", msg, partDir, tc.want)
			}
			if strings.Contains(msg, key) || strings.Contains(msg, encKey(2)) {
				t.Fatal("the refusal repeats a key")
			}
		})
	}
	// The refusals left the data alone.
	s3 := Start(t, WithDir(dir), withEncryption(key))
	if got := strings.Join(encPolled(t, encClient(t, s3), 1), "\n"); got != want {
		t.Fatalf("after the refusals:\n%s", got)
	}
}

func TestEncryptionBadKeyRefusesBoot(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(make([]byte, 17))
	for _, tc := range []struct{ key, want string }{
		{short, "system.encryption.key: must be the standard base64 of 32 bytes (got 17 bytes); generate one with `openssl rand -base64 32`"},
		{"not-base64!", "system.encryption.key: must be the standard base64 of 32 bytes (it is not valid standard base64)"},
		{"", "system.encryption.key: must be set"},
	} {
		err := encStartErr(t, t.TempDir(), func(c *config.Config) {
			c.System.Encryption = config.EncryptionConfig{Enabled: true, Key: config.Secret(tc.key)}
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("key %q: broker.New = %v, want %q", tc.key, err, tc.want)
		}
	}
}

// TestEncryptionEnabledOverPlaintextData: messages written before
// encryption was enabled stay readable as stored; new ones are encrypted.
func TestEncryptionEnabledOverPlaintextData(t *testing.T) {
	dir := t.TempDir()
	s1 := Start(t, WithDir(dir))
	c := encClient(t, s1)
	ctx := encCtx(t)
	if _, err := c.CreateStream(ctx, "vault"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, encStream, "secrets", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessages(ctx, encStream, encTopic, wire.PartitioningByID(0), []wire.Message{{ID: client.NewMessageID(), Payload: []byte("plain-before")}}); err != nil {
		t.Fatal(err)
	}
	s1.Stop()
	s2 := Start(t, WithDir(dir), withEncryption(encKey(3)))
	c2 := encClient(t, s2)
	if _, err := c2.SendMessages(encCtx(t), encStream, encTopic, wire.PartitioningByID(0), []wire.Message{{ID: client.NewMessageID(), Payload: []byte("sealed-after")}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(encPolled(t, c2, 0), ","); got != "plain-before,sealed-after" {
		t.Fatalf("polled %q", got)
	}
	s2.Stop()
	if len(grepDir(t, dir, []byte("plain-before"))) == 0 || len(grepDir(t, dir, []byte("sealed-after"))) != 0 {
		t.Fatal("the old message should be stored as it was and the new one encrypted")
	}
	if err := encStartErr(t, dir, func(*config.Config) {}); err == nil || !strings.Contains(err.Error(), "system.encryption.key") {
		t.Fatalf("disabling over encrypted data: %v", err)
	}
}

// TestEncryptionOverTransports polls an encrypted partition over TCP with
// TLS, QUIC and WebSocket (raw frames): the decrypt point is below the
// transports, so each gets the plaintext records, and a retried send (same
// request number) is still recognised as a duplicate although its
// ciphertext would differ.
func TestEncryptionOverTransports(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"tls", []Option{WithTLS()}},
		{"quic", []Option{WithTransport(TransportQUIC)}},
		{"ws", []Option{WithTransport(TransportWS)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, append(tc.opts, withEncryption(encKey(4)))...)
			c := s.Dial(t)
			c.LoginRoot()
			st := mkStream(t, c, "vault")
			mkTopic(t, c, st, "secrets", 1, nil)
			payloads := Payloads(5, 100, "transport-secret")
			body := SendBody(sid(st), sid(0), wire.PartitioningByID(0), Batch(t, 1, payloads...))
			h := c.SendHeader(wire.OpSendMessages)
			ExpectOK(t, c.Do(h, body))
			// The same request again: a duplicate, not appended twice.
			ExpectOK(t, c.Do(h, body))
			got := c.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(sid(1)), StreamID: sid(st), TopicID: sid(0),
				Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(1), Count: 100})
			if got.Count != 4 {
				t.Fatalf("polled %d messages from offset 1, want 4 (the retry must not append)", got.Count)
			}
			bi := got.Batches()
			for b, ok := bi.Next(); ok; b, ok = bi.Next() {
				if _, err := wire.ValidateBatch(b.Bytes()); err != nil {
					t.Fatalf("polled record: %v", err)
				}
			}
			it := got.Messages()
			for i := 1; ; i++ {
				m, ok := it.Next()
				if !ok {
					break
				}
				if !bytes.Equal(m.Payload, payloads[i]) || m.Offset != uint64(i) {
					t.Fatalf("message %d: offset %d payload %q", i, m.Offset, m.Payload)
				}
			}
			s.Stop()
			if hits := grepDir(t, s.Dir, []byte("transport-secret")); len(hits) > 0 {
				t.Fatalf("plaintext in %v", hits)
			}
		})
	}
}
