package metadata

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[at] ^= 0x20
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

// TestDamageReportsTheFile: a start that cannot recover names the damaged
// file in a *CorruptError: a bad journal record it needs, or a damaged
// snapshot whose operations the journal no longer holds.
func TestDamageReportsTheFile(t *testing.T) {
	t.Run("journal record", func(t *testing.T) {
		dir := t.TempDir()
		s := openTest(t, dir, 1<<30, nil)
		s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "a"})
		s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "b"})
		path := journalPath(t, dir)
		flipByte(t, path, recordHeaderLen+2)
		_, err := Open(Config{Dir: dir, Hasher: auth.NewHasher(cheapParams, nil), Logger: quiet})
		ce, ok := errors.AsType[*CorruptError](err)
		if !ok || ce.File != path || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("open: %v, want a CorruptError naming %s", err, path)
		}
	})
	t.Run("snapshots", func(t *testing.T) {
		dir := t.TempDir()
		s := openTest(t, dir, 3, nil)
		for i := range 10 {
			s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s" + itoa(uint64(i))})
		}
		snaps, _ := listOps(dir, snapshotPrefix, snapshotSuffix)
		for _, op := range snaps {
			flipByte(t, filepath.Join(dir, snapshotName(op)), 20)
		}
		newest := filepath.Join(dir, snapshotName(snaps[len(snaps)-1]))
		_, err := Open(Config{Dir: dir, Hasher: auth.NewHasher(cheapParams, nil), Logger: quiet})
		if ce, ok := errors.AsType[*CorruptError](err); !ok || ce.File != newest {
			t.Fatalf("open: %v, want a CorruptError naming %s", err, newest)
		}
		s.Close()
	})
}

// TestDamagedCoveredJournalIsNotRead: a journal file whose every op is in
// the loaded snapshot is not needed: damage there does not stop the start.
func TestDamagedCoveredJournalIsNotRead(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "a"})
	want := s.encoded()
	if err := s.Close(); err != nil { // final snapshot, new journal file
		t.Fatal(err)
	}
	firsts, _ := listOps(dir, journalPrefix, journalSuffix)
	if len(firsts) < 2 {
		t.Fatalf("journal files %v, want the covered one and the new one", firsts)
	}
	flipByte(t, filepath.Join(dir, journalName(firsts[0])), recordHeaderLen+2)
	r := openTest(t, dir, 1<<30, nil)
	defer r.Close()
	if !bytes.Equal(r.encoded(), want) {
		t.Fatal("state differs after a restart past a damaged covered journal")
	}
}
