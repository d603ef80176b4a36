package partition

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// cryptPlane opens a plane over dir with cipher c (nil: disabled) and
// creates partition 0 of a fixed topic.
func cryptPlane(t *testing.T, dir string, c *encryption.Cipher) (*Plane, catalog.TopicRef) {
	t.Helper()
	p, err := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RetentionInterval: -1, Cipher: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ref := catalog.TopicRef{StreamID: 1, TopicID: 1, Incarnation: 7, Settings: wire.DefaultTopicSettings()}
	if err := p.CreatePartitions(ref, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	return p, ref
}

// labelled builds a batch of n messages "tag-i" with user headers on odd
// ones.
func labelled(t *testing.T, tag string, n int) []byte {
	t.Helper()
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("h"), Value: wire.StringHeader("header-" + tag)}}.AppendTo(nil)
	var b wire.BatchBuilder
	b.Reset(nil)
	for i := range n {
		var uh []byte
		if i%2 == 1 {
			uh = hdrs
		}
		if err := b.Add(wire.Uint128{Lo: uint64(i + 1)}, 10, fmt.Appendf(nil, "%s-%d", tag, i), uh); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sendTo appends a batch the way send does (encrypting when enabled).
func sendTo(t *testing.T, p *Plane, ref catalog.TopicRef, batch []byte) {
	t.Helper()
	part := p.lookup(ref.Incarnation, 0)
	if part == nil || part.log == nil {
		t.Fatal("partition 0 not open")
	}
	v, err := wire.ValidateBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	sealed, buf, code := p.seal(part, batch)
	if code != 0 {
		t.Fatalf("seal: status %d", code)
	}
	if buf != nil {
		defer part.crypt.cipher.PutBuffer(buf)
	}
	if out := part.commit.Commit(context.Background(), commit.Write{Kind: commit.Send, Rec: sealed, Count: v.MessageCount()}); out.Code != 0 {
		t.Fatalf("append: status %d", out.Code)
	}
}

// polled is what a poll of count messages from start returns: payloads
// with their user-header blocks, every record checked like a client
// (layout) and like admission (checksums over plaintext).
func polled(t *testing.T, p *Plane, ref catalog.TopicRef, start, count uint64) ([]string, error) {
	t.Helper()
	part := p.lookup(ref.Incarnation, 0)
	_, next := part.log.Bounds()
	r := getPollReply()
	defer r.Release()
	_, n, err := p.fill(context.Background(), r, part, start, count, next)
	if err != nil {
		return nil, err
	}
	body := bytes.Clone(r.head[wire.PollReplyHeadSize:])
	var tail bytes.Buffer
	if _, err := r.WriteTo(&tail); err != nil {
		t.Fatal(err)
	}
	body = append(body, tail.Bytes()...)
	var out []string
	for len(body) > 0 {
		v, rest, err := wire.ParseBatch(body)
		if err != nil {
			t.Fatalf("poll record does not parse: %v", err)
		}
		if _, err := wire.ValidateBatch(v.Bytes()); err != nil {
			t.Fatalf("poll record checksums: %v", err)
		}
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			s := string(m.Payload())
			if h := m.UserHeaders(); len(h) > 0 {
				var uh wire.UserHeaders
				if err := uh.Decode(h); err != nil {
					t.Fatalf("user headers: %v", err)
				}
				s += "+" + string(uh[0].Value.Data)
			}
			out = append(out, s)
		}
		body = rest
	}
	if uint64(len(out)) != n {
		t.Fatalf("fill counted %d messages, records hold %d", n, len(out))
	}
	return out, nil
}

func segmentBytes(t *testing.T, dir string) []byte {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "topics", "*", "partitions", "*", "*.log"))
	if len(logs) == 0 {
		t.Fatal("no segment file")
	}
	var all []byte
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

func TestEncryptedPartitionRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := testutil.Cipher(t, 1)
	p, ref := cryptPlane(t, dir, c)
	sendTo(t, p, ref, labelled(t, "alpha", 4))
	sendTo(t, p, ref, labelled(t, "beta", 3))
	want := []string{"alpha-0", "alpha-1+header-alpha", "alpha-2", "alpha-3+header-alpha", "beta-0", "beta-1+header-beta", "beta-2"}
	got, err := polled(t, p, ref, 0, 100)
	if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("poll = %q, %v\nwant %q", got, err, want)
	}
	// Slices: start and end inside records.
	for _, tc := range []struct{ start, count uint64 }{{1, 2}, {2, 3}, {3, 1}, {5, 10}, {0, 1}} {
		got, err := polled(t, p, ref, tc.start, tc.count)
		end := min(tc.start+tc.count, uint64(len(want)))
		if err != nil || strings.Join(got, ",") != strings.Join(want[tc.start:end], ",") {
			t.Fatalf("poll %+v = %q, %v", tc, got, err)
		}
	}
	raw := segmentBytes(t, dir)
	for _, secret := range []string{"alpha-", "beta-", "header-alpha"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("segment file holds plaintext %q", secret)
		}
	}
	p.Close()
	// Same key: readable after a restart (recovery verified the stored
	// checksums over the ciphertext).
	p2, _ := cryptPlane(t, dir, c)
	if err := p2.KeyError(); err != nil {
		t.Fatal(err)
	}
	if got, err := polled(t, p2, ref, 0, 100); err != nil || len(got) != 7 {
		t.Fatalf("after restart: %q, %v", got, err)
	}
}

func TestEncryptedPartitionRefusedWithoutItsKey(t *testing.T) {
	dir := t.TempDir()
	c := testutil.Cipher(t, 1)
	p, ref := cryptPlane(t, dir, c)
	sendTo(t, p, ref, labelled(t, "alpha", 2))
	p.Close()
	partDir := p.PartitionDir(ref, 0)
	for _, tc := range []struct {
		name   string
		cipher *encryption.Cipher
		want   string
	}{
		{"disabled", nil, "system.encryption.key: partition data at " + partDir + " is encrypted (key fingerprint " + c.Fingerprint() + ") but system.encryption.enabled is false"},
		{"other key", testutil.Cipher(t, 2), "system.encryption.key: partition data at " + partDir + " was encrypted with another key (fingerprint " + c.Fingerprint()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := cryptPlane(t, dir, tc.cipher)
			err := p.KeyError()
			var ke *KeyError
			if !errors.As(err, &ke) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("KeyError() = %v\nwant one line starting %s", err, tc.want)
			}
			part := p.lookup(ref.Incarnation, 0)
			if part == nil || part.log != nil || !errors.As(part.broken, &ke) {
				t.Fatalf("partition not stopped: %+v", part)
			}
			p.Close()
		})
	}
	// The refusals changed nothing: the right key still reads it all.
	p3, _ := cryptPlane(t, dir, c)
	if got, err := polled(t, p3, ref, 0, 10); err != nil || strings.Join(got, ",") != "alpha-0,alpha-1+header-alpha" {
		t.Fatalf("with the right key: %q, %v", got, err)
	}
}

func TestEncryptionEnabledOverPlaintext(t *testing.T) {
	dir := t.TempDir()
	p, ref := cryptPlane(t, dir, nil)
	sendTo(t, p, ref, labelled(t, "old", 3))
	p.Close()
	c := testutil.Cipher(t, 1)
	p2, _ := cryptPlane(t, dir, c)
	if err := p2.KeyError(); err != nil {
		t.Fatal(err)
	}
	if pb := p2.lookup(ref.Incarnation, 0).crypt.plainBefore.Load(); pb != 3 {
		t.Fatalf("plaintext before %d, want 3", pb)
	}
	sendTo(t, p2, ref, labelled(t, "new", 2))
	want := "old-0,old-1+header-old,old-2,new-0,new-1+header-new"
	if got, err := polled(t, p2, ref, 0, 10); err != nil || strings.Join(got, ",") != want {
		t.Fatalf("mixed poll = %q, %v", got, err)
	}
	if got, err := polled(t, p2, ref, 2, 2); err != nil || strings.Join(got, ",") != "old-2,new-0" {
		t.Fatalf("poll across the boundary = %q, %v", got, err)
	}
	raw := segmentBytes(t, dir)
	if !bytes.Contains(raw, []byte("old-0")) || bytes.Contains(raw, []byte("new-0")) {
		t.Fatal("old messages should be stored as they were, new ones encrypted")
	}
	p2.Close()
	// Now encrypted data exists: disabling is refused.
	p3, _ := cryptPlane(t, dir, nil)
	if err := p3.KeyError(); err == nil {
		t.Fatal("disabling encryption over encrypted data was accepted")
	}
	p3.Close()
	// Purge: the marker restarts at offset 0 and new records are encrypted.
	p4, ref4 := cryptPlane(t, dir, c)
	if err := p4.PurgeTopic(ref4); err != nil {
		t.Fatal(err)
	}
	sendTo(t, p4, ref4, labelled(t, "fresh", 2))
	if got, err := polled(t, p4, ref4, 0, 10); err != nil || strings.Join(got, ",") != "fresh-0,fresh-1+header-fresh" {
		t.Fatalf("after purge: %q, %v", got, err)
	}
	m, found, err := readMarker(filepath.Join(p4.PartitionDir(ref4, 0), markerFileName))
	if err != nil || !found || m.PlaintextBefore != 0 || m.KeyFingerprint != c.Fingerprint() {
		t.Fatalf("marker after purge %+v %v %v", m, found, err)
	}
}

func TestEncryptionMarkerDroppedWhenNothingEncrypted(t *testing.T) {
	dir := t.TempDir()
	p, ref := cryptPlane(t, dir, nil)
	sendTo(t, p, ref, labelled(t, "old", 2))
	p.Close()
	// Enabled once, nothing written under the key.
	p2, _ := cryptPlane(t, dir, testutil.Cipher(t, 1))
	p2.Close()
	marker := filepath.Join(p.PartitionDir(ref, 0), markerFileName)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("marker not written: %v", err)
	}
	// Another key: nothing of the first key's is stored, so it is taken.
	p3, _ := cryptPlane(t, dir, testutil.Cipher(t, 2))
	if err := p3.KeyError(); err != nil {
		t.Fatalf("another key over plaintext only: %v", err)
	}
	p3.Close()
	p4, _ := cryptPlane(t, dir, nil)
	if err := p4.KeyError(); err != nil {
		t.Fatalf("disabled over plaintext only: %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("marker kept: %v", err)
	}
	if got, err := polled(t, p4, ref, 0, 10); err != nil || len(got) != 2 {
		t.Fatalf("plaintext poll %q, %v", got, err)
	}
}

func TestEncryptedRecordModifiedOnDisk(t *testing.T) {
	dir := t.TempDir()
	c := testutil.Cipher(t, 1)
	p, ref := cryptPlane(t, dir, c)
	sendTo(t, p, ref, labelled(t, "alpha", 2))
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(p.PartitionDir(ref, 0), "*.log"))
	f, err := os.OpenFile(logs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a ciphertext byte of the first payload (after its nonce).
	at := int64(wire.BatchHeaderSize + wire.MessageHeaderSize + encryption.NonceSize + 1)
	var b [1]byte
	if _, err := f.ReadAt(b[:], at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b[:], at); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := polled(t, p, ref, 0, 10); !errors.Is(err, errUnreadable) || !errors.Is(err, encryption.ErrAuth) {
		t.Fatalf("poll of a modified record: %v, want errUnreadable (ErrAuth)", err)
	}
}

func TestEncryptedStoredLayout(t *testing.T) {
	dir := t.TempDir()
	c := testutil.Cipher(t, 1)
	p, ref := cryptPlane(t, dir, c)
	plain := labelled(t, "alpha", 2)
	sendTo(t, p, ref, plain)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	raw := segmentBytes(t, dir)
	v, err := wire.ValidateBatch(raw)
	if err != nil {
		t.Fatalf("stored record does not verify over its ciphertext: %v", err)
	}
	if v.Len() != len(plain)+3*encryption.Overhead || v.PartitionID() != 0 || v.BaseOffset() != 0 || v.BaseTimestamp() == 0 {
		t.Fatalf("stored record: length %d (plaintext %d), header %+v", v.Len(), len(plain), v.Header())
	}
	it := v.Messages()
	m0, _ := it.Next()
	m1, _ := it.Next()
	if l := binary.LittleEndian.Uint32(m0.Bytes()[wire.MessageOffUserHeadersLength:]); l != 0 {
		t.Fatalf("empty user headers stored as %d bytes", l)
	}
	if len(m1.UserHeaders()) == 0 || len(m0.Payload()) != len("alpha-0")+encryption.Overhead {
		t.Fatalf("stored sections: payload %d, headers %d", len(m0.Payload()), len(m1.UserHeaders()))
	}
}
