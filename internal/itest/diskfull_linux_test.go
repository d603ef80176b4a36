package itest

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// TestDiskFullRealFileSystem runs a broker whose data directory is on an
// 8 MiB tmpfs, fills the file system, and checks what docs/OPERATIONS.md
// ("Disk errors") promises: sends get CannotAppendMessage (4010), the
// server stays up and serves polls, the full disk is logged once; once a
// filler file is deleted sends succeed again with dense offsets, and
// after a restart every acknowledged message is there. Mounting needs
// root (CI runs as root); otherwise the test is skipped.
func TestDiskFullRealFileSystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs for a real full file system (CI runs as root)")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", mnt, err)
	}
	// Registered after TempDir's removal, so it runs before it (and
	// after the brokers' cleanups, registered later).
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	dir := filepath.Join(mnt, "data")
	logs := &testutil.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	s := Start(t, WithDir(dir), WithBrokerOptions(broker.WithLogger(logger)))
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "disk")
	mkTopic(t, c, st, "t", 1, nil)
	stream, topic, part := sid(st), sid(0), wire.PartitioningByID(0)

	var acked [][]byte
	for i := range 50 {
		c.MustSend(stream, topic, part, Batch(t, uint64(i+1), payload(i)))
		acked = append(acked, payload(i))
	}
	// Fill the file system with a filler file, leaving no space.
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)

	// Send until the disk refuses (the partition may still have some
	// reserved space); every acknowledged payload is remembered.
	const maxSends = 4000 // 16 MiB of payloads: more than the file system holds
	refused := false
	for i := len(acked); i < maxSends && !refused; i++ {
		p := payload(i)
		f := c.SendMessages(SendBody(stream, topic, part, Batch(t, uint64(i+1), p)))
		switch {
		case f.Kind == wire.KindReply && f.Reply.Status == 0:
			acked = append(acked, p)
		case f.Kind == wire.KindReply && f.Reply.Status == wire.ErrCannotAppendMessage.Code:
			refused = true
		default:
			t.Fatalf("send %d on a full disk answered %v", i, f)
		}
	}
	if !refused {
		t.Fatalf("%d sends on a full 8 MiB file system were all acknowledged", maxSends)
	}
	t.Logf("%d sends acknowledged (50 before the disk filled) until the full disk refused one", len(acked))
	// Refused again, and the server still serves polls and pings.
	for range 3 {
		f := c.SendMessages(SendBody(stream, topic, part, Batch(t, 1, payload(0))))
		ExpectStatus(t, f, wire.ErrCannotAppendMessage.Code)
	}
	c.Ping()
	checkPolled(t, c, stream, topic, acked)
	// Polls that auto-commit their offset are served too; a consumer
	// offset the full disk refuses is logged once, not per poll.
	for i := range 5 {
		c.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(7)), StreamID: stream, TopicID: topic,
			Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(uint64(i)), Count: 1, AutoCommit: true})
	}
	if n := strings.Count(logs.String(), "consumer offsets are not stored"); n > 1 {
		t.Fatalf("the refused consumer offsets were logged %d times, want at most once", n)
	}
	if n := strings.Count(logs.String(), "disk full: the partition refuses writes"); n != 1 {
		t.Fatalf("the full disk was logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "no space left on device") || !strings.Contains(logs.String(), dir) {
		t.Fatalf("the log does not name the directory and the error:\n%s", logs.String())
	}

	// Space back: sends succeed again, offsets continue.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		p := payload(len(acked) + i)
		conf := c.MustSend(stream, topic, part, Batch(t, uint64(100000+i), p))
		if conf.BaseOffset != uint64(len(acked)) {
			t.Fatalf("send after space came back got offset %d, want %d", conf.BaseOffset, len(acked))
		}
		acked = append(acked, p)
	}
	if !strings.Contains(logs.String(), "disk space is back") {
		t.Fatalf("no log line when space came back:\n%s", logs.String())
	}
	checkPolled(t, c, stream, topic, acked)

	// Nothing acknowledged is lost across a restart.
	s.Stop()
	s2 := Start(t, WithDir(dir))
	c2 := s2.Dial(t)
	c2.LoginRoot()
	checkPolled(t, c2, stream, topic, acked)
}

// payload is the 4 KiB payload of send i.
func payload(i int) []byte {
	p := bytes.Repeat([]byte{byte('a' + i%26)}, 4096)
	copy(p, "msg-"+strconv.Itoa(i)+"-")
	return p
}

// fill writes path until the file system is out of space.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for range 1 << 12 { // bounded: 256 MiB
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the file system never filled")
}

// checkPolled polls partition 0 from offset 0 and checks it holds exactly
// want, in order, at offsets 0..len(want)-1.
func checkPolled(t *testing.T, c *Client, stream, topic wire.Identifier, want [][]byte) {
	t.Helper()
	var got [][]byte
	for len(got) < len(want)+1 {
		p := c.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: stream, TopicID: topic,
			Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(uint64(len(got))), Count: 1000})
		n := len(got)
		it := p.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if m.Offset != uint64(len(got)) {
				t.Fatalf("polled offset %d, want %d", m.Offset, len(got))
			}
			got = append(got, append([]byte(nil), m.Payload...))
		}
		if len(got) == n {
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("polled %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("message %d differs", i)
		}
	}
}
