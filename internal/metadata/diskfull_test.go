package metadata

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/wire"
)

// TestJournalDiskFull: a metadata write that finds the disk full (a short
// journal write, then ENOSPC) is refused with ErrDiskFull, cut back and
// not applied (the state and the journal are as before), answers
// CannotWriteToFile (10006), and the next write that fits succeeds; a
// failed fsync stays sticky.
func TestJournalDiskFull(t *testing.T) {
	dir := t.TempDir()
	faults := &fileio.Faults{Base: fileio.OS{}}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s, err := Open(Config{
		Dir: dir, Now: clock.now, Hasher: auth.NewHasher(cheapParams, nil), ClientsTableMax: 16,
		SnapshotEvery: 1 << 30, Logger: quiet, FileIO: faults,
		Root: func() (string, string, error) { return "iggy", "iggy", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testStore{Store: s, dir: dir, clock: clock}
	ts.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "before"})
	state, size := ts.encoded(), fileSize(t, journalPath(t, dir))
	faults.Add(fileio.Rule{Ops: fileio.OpWrite, Name: "journal-*", Times: 2, Partial: 9, Err: syscall.ENOSPC})
	for range 2 {
		_, err := s.submit(Entry{Kind: KindCommand, Code: wire.CmdCreateStream, Body: (&wire.CreateStream{Name: "full"}).AppendTo(nil)})
		if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("create stream on a full disk: %v", err)
		}
		if code := transientCode(err); code != wire.ErrCannotWriteToFile.Code {
			t.Fatalf("code %d, want CannotWriteToFile", code)
		}
		if !bytes.Equal(ts.encoded(), state) {
			t.Fatal("a refused write changed the state")
		}
		if got := fileSize(t, journalPath(t, dir)); got != size {
			t.Fatalf("journal is %d bytes after a refused write, want %d", got, size)
		}
	}
	ts.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "after"})
	want := ts.encoded()
	// Restart from the journal alone (no Close): both streams, nothing else.
	again := openTest(t, dir, 1<<30, nil)
	if !bytes.Equal(again.encoded(), want) {
		t.Fatal("replay after the full disk differs from the live state")
	}
	again.Close()

	faults.Add(fileio.Rule{Ops: fileio.OpSync, Name: "journal-*", Err: syscall.ENOSPC})
	if _, err := s.submit(Entry{Kind: KindCommand, Code: wire.CmdCreateStream, Body: (&wire.CreateStream{Name: "x"}).AppendTo(nil)}); err == nil || errors.Is(err, ErrDiskFull) {
		t.Fatalf("failed fsync: %v, want the sticky failure", err)
	}
	faults.Clear()
	if _, err := s.submit(Entry{Kind: KindMarker}); err == nil {
		t.Fatal("a failed fsync was not sticky")
	}
}
