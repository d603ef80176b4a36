//go:build !windows

package tiertest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredDamagedObjects damages the remote tier behind the server's
// back (versitygw keeps each object as a plain file) and checks that a
// poll of the damaged data fails with an error and never returns other
// bytes, that the rest of the log stays readable, and that the data polls
// back once the damage is repaired (a chunk that failed verification is
// not cached):
//
//   - a flipped byte in a segment log object;
//   - an index object whose third entry names the wrong offset, read
//     because the local copy of the index was removed;
//   - a local index copy removed on its own: fetched again from the
//     bucket;
//   - a local index copy naming a wrong offset while the bucket's index
//     object is intact: the bucket holds everything needed, so the data
//     must poll back.
func TestTieredDamagedObjects(t *testing.T) {
	const (
		perBatch = 100
		size     = 1000
		segment  = 1 << 20
		prefix   = "damage"
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment))
	dir := srv.PartitionDir(t)

	p := newProducer(c, to, perBatch, size, 0)
	produce(t, p, 100, 0, 30*time.Second)
	st, _ := waitCaughtUp(t, dir, 0, 0, time.Minute)
	segs := st.Manifest.Segments
	if len(segs) < 8 {
		t.Fatalf("want at least 8 segments in the bucket: %s", st)
	}
	// Reading a remote segment to its end prefetches the first chunk of
	// the next one into the cache; the segments damaged are never read
	// before, nor right after a segment read.
	logSeg, idxSeg, copySeg, localSeg := segs[1], segs[4], segs[5], segs[7]
	wrongOffset := func(b []byte) { binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)+1) }
	const thirdEntry = 2 * 24 // the offset field of the third index entry

	// A flipped byte in the middle of a log object.
	restoreLog := patchFile(t, store.ObjectPath(logSeg.Key), logSeg.Bytes/2, func(b []byte) { b[0] ^= 0x5a })
	expectReadError(t, c, to, logSeg.Start+1, "a segment log object with a flipped byte")
	readBack(t, c, to, segs[0].Start, segs[0].End, size, 30*time.Second)
	readBack(t, c, to, segs[2].Start, segs[2].End, size, 30*time.Second)
	restoreLog()
	if _, err := readRange(c, to, logSeg.Start, logSeg.End, size, 0, 30*time.Second); err != nil {
		t.Errorf("the repaired log object of segment %d..%d: %v", logSeg.Start, logSeg.End, err)
	}

	// A wrong index object, read because the local copy is gone.
	removeIndexCopy(t, dir, idxSeg.Start)
	restoreIdx := patchFile(t, store.ObjectPath(strings.TrimSuffix(idxSeg.Key, ".log")+".index"), thirdEntry, wrongOffset)
	expectReadError(t, c, to, idxSeg.Start, "an index object naming a wrong offset")
	restoreIdx()
	if _, err := readRange(c, to, idxSeg.Start, idxSeg.End, size, 0, 30*time.Second); err != nil {
		t.Errorf("segment %d..%d after its index object was repaired: %v (the damaged index fetched from the bucket "+
			"stays as the local copy %s and is used from then on)", idxSeg.Start, idxSeg.End, err, indexCopy(dir, idxSeg.Start))
	}

	// A local index copy removed on its own comes back from the bucket.
	removeIndexCopy(t, dir, copySeg.Start)
	readBack(t, c, to, copySeg.Start, copySeg.End, size, 30*time.Second)
	if _, err := os.Stat(indexCopy(dir, copySeg.Start)); err != nil {
		t.Errorf("the local copy of the index of segment %d was not restored: %v", copySeg.Start, err)
	}

	// A damaged local copy, the bucket intact: never other bytes, and the
	// data polls back (a second poll may be needed).
	patchFile(t, indexCopy(dir, localSeg.Start), thirdEntry, wrongOffset)
	var err error
	for range 2 {
		if _, err = readRange(c, to, localSeg.Start, localSeg.End, size, 0, 30*time.Second); err == nil ||
			!errors.Is(err, wire.ErrCannotReadMessage) {
			break
		}
	}
	if err != nil {
		t.Errorf("segment %d..%d with a damaged local index copy and an intact index object in the bucket: %v",
			localSeg.Start, localSeg.End, err)
	}

	readBack(t, c, to, segs[len(segs)-1].End, p.Next, size, time.Minute)
}

// patchFile changes the 8 bytes of the file at path at off with edit and
// returns a function that puts the original bytes back.
func patchFile(t testing.TB, path string, off int64, edit func([]byte)) (restore func()) {
	t.Helper()
	orig := make([]byte, 8)
	writeAt(t, path, off, func(f *os.File) []byte {
		if _, err := f.ReadAt(orig, off); err != nil {
			t.Fatal(err)
		}
		b := append([]byte(nil), orig...)
		edit(b)
		return b
	})
	return func() { writeAt(t, path, off, func(*os.File) []byte { return orig }) }
}

// writeAt writes what data returns at off of the file at path.
func writeAt(t testing.TB, path string, off int64, data func(*os.File) []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data(f), off); err != nil {
		t.Fatal(err)
	}
}

// indexCopy is the local copy of the index of the remote segment at start.
func indexCopy(dir string, start uint64) string {
	return filepath.Join(dir, "remote", fmt.Sprintf("%020d.index", start))
}

// removeIndexCopy removes the local copy of a remote segment's index.
func removeIndexCopy(t testing.TB, dir string, start uint64) {
	t.Helper()
	if err := os.Remove(indexCopy(dir, start)); err != nil {
		t.Fatal(err)
	}
}

// expectReadError polls at offset from and fails the test unless the poll
// fails with the server's CannotReadMessage (4011); damaged names what is
// damaged in the failure.
func expectReadError(t testing.TB, c *client.Client, to target, from uint64, damaged string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.PollMessages(ctx, wire.PollMessages{
		Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: to.stream, TopicID: to.topic,
		Partition: wire.SomePartition(to.partition), Strategy: wire.OffsetStrategy(from), Count: 10,
	})
	switch {
	case err == nil:
		it := got.Messages()
		m, ok := it.Next()
		t.Errorf("%s: the poll at offset %d succeeded (first message: offset %d, any: %v, payload as sent: %v)",
			damaged, from, m.Offset, ok, ok && payloadOK(m.Offset, 0, len(m.Payload), m.Payload))
	case !errors.Is(err, wire.ErrCannotReadMessage):
		t.Errorf("%s: the poll at offset %d failed with %v, want CannotReadMessage (4011)", damaged, from, err)
	}
}
