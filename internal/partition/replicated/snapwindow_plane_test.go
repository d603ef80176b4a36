package replicated

import (
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// TestRestoreReplicatedWindow: a version 3 snapshot's window replaces the
// replica's, a version 2 snapshot (no window) leaves it as it is, and a
// snapshot taken on the loop carries the live window.
func TestRestoreReplicatedWindow(t *testing.T) {
	rep := bareReplica(t)
	part := rep.part
	own, theirs := wire.Uint128{Lo: 1}, wire.Uint128{Lo: 2}
	part.Window.Commit(commit.Key{Client: own, Request: 1, Hash: 11})
	if err := rep.Restore(5, encodeV2(partSnapshot{})); err != nil {
		t.Fatal(err)
	}
	if !part.Window.Committed(commit.Key{Client: own, Request: 1, Hash: 11}) {
		t.Fatal("a version 2 snapshot cleared the window")
	}
	snap := partSnapshot{window: []session.ClientWindow{{Client: theirs, Watermark: 4, Committed: []session.CommittedRequest{{Request: 4, BodyHash: 44}}}}}
	if err := rep.Restore(6, snap.encode()); err != nil {
		t.Fatal(err)
	}
	if part.Window.Committed(commit.Key{Client: own, Request: 1, Hash: 11}) || !part.Window.Committed(commit.Key{Client: theirs, Request: 4, Hash: 44}) {
		t.Fatalf("after a version 3 restore: %+v", part.Window.Export(snapshotWindowClients))
	}
	data, err := rep.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := decodeSnapshot(data); err != nil || !reflect.DeepEqual(s.window, snap.window) {
		t.Fatalf("snapshot on the loop: %+v %v", s.window, err)
	}
}
