package session

import (
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// fillWindow commits, for client i (1..clients), 60*i requests with the
// hash request*7+i, interleaving the clients so that their last uses
// differ from their creation order.
func fillWindow(w *PartitionWindow, clients int) {
	for r := uint64(1); r <= uint64(60*clients); r++ {
		for i := clients; i >= 1; i-- {
			if r <= uint64(60*i) {
				w.Commit(wire.Uint128{Lo: uint64(i)}, r, r*7+uint64(i))
			}
		}
	}
}

// sameVerdicts fails when a and b answer some Check differently.
func sameVerdicts(t *testing.T, a, b *PartitionWindow, clients int) {
	t.Helper()
	for i := 0; i <= clients+1; i++ {
		c := wire.Uint128{Lo: uint64(i)}
		for r := uint64(0); r <= uint64(60*clients+10); r++ {
			for _, h := range []uint64{r*7 + uint64(i), 1} {
				if va, vb := a.Check(c, r, h), b.Check(c, r, h); va != vb {
					t.Fatalf("client %d request %d hash %d: %d before, %d restored", i, r, h, va, vb)
				}
			}
		}
	}
}

// TestPartitionWindowExportRestore: a window restored from Export answers
// every Check as the original, in wrapped and unwrapped rings, and evicts
// its clients in the same order.
func TestPartitionWindowExportRestore(t *testing.T) {
	const clients = 4 // client 3 and 4 wrap their ring (180, 240 > 128)
	w := NewPartitionWindow(clients)
	fillWindow(w, clients)
	got := w.Export(0)
	if len(got) != clients {
		t.Fatalf("%d clients exported, want %d", len(got), clients)
	}
	for _, c := range got {
		want := min(60*int(c.Client.Lo), PartitionWindowSize)
		if len(c.Committed) != want || c.Watermark != uint64(60*c.Client.Lo) {
			t.Fatalf("client %d: %d requests, watermark %d", c.Client.Lo, len(c.Committed), c.Watermark)
		}
		last := c.Committed[len(c.Committed)-1]
		if last.Request != c.Watermark || last.BodyHash != c.Watermark*7+c.Client.Lo {
			t.Fatalf("client %d: newest request %+v not last", c.Client.Lo, last)
		}
	}
	r := NewPartitionWindow(clients)
	r.Commit(wire.Uint128{Lo: 99}, 1, 1) // replaced by Restore
	r.Restore(got)
	sameVerdicts(t, w, r, clients)
	if again := r.Export(0); !reflect.DeepEqual(again, got) {
		t.Fatal("export of the restored window differs")
	}
	// The same next commits evict the same clients.
	for _, x := range []*PartitionWindow{w, r} {
		x.Commit(wire.Uint128{Lo: 50}, 1, 1)
		x.Commit(wire.Uint128{Lo: 2}, 500, 1)
		x.Commit(wire.Uint128{Lo: 51}, 1, 1)
	}
	if a, b := w.Export(0), r.Export(0); !reflect.DeepEqual(a, b) {
		t.Fatalf("evictions differ:\n%+v\n%+v", a, b)
	}
}

// TestPartitionWindowExportLimit: Export keeps the most recently committed
// clients, and Restore keeps at most the window's bound, the most recent.
func TestPartitionWindowExportLimit(t *testing.T) {
	w := NewPartitionWindow(8)
	for i := uint64(1); i <= 5; i++ {
		w.Commit(wire.Uint128{Lo: i}, 1, i)
	}
	w.Commit(wire.Uint128{Lo: 2}, 2, 2) // 2 is now the most recent
	got := w.Export(2)
	if len(got) != 2 || got[0].Client.Lo != 5 || got[1].Client.Lo != 2 {
		t.Fatalf("export(2) = %+v, want clients 5 then 2", got)
	}
	small := NewPartitionWindow(3)
	small.Restore(w.Export(0))
	if small.Clients() != 3 {
		t.Fatalf("%d clients restored, want 3", small.Clients())
	}
	for i, want := range []PartitionVerdict{PartitionNew, PartitionDuplicate, PartitionNew, PartitionDuplicate, PartitionDuplicate} {
		c := uint64(i + 1)
		if v := small.Check(wire.Uint128{Lo: c}, 1, c); v != want {
			t.Fatalf("client %d after a restore past the bound: %d, want %d", c, v, want)
		}
	}
	// Over-long request lists keep their newest requests.
	long := ClientWindow{Client: wire.Uint128{Lo: 1}, Watermark: 300}
	for r := uint64(1); r <= 300; r++ {
		long.Committed = append(long.Committed, CommittedRequest{Request: r, BodyHash: r})
	}
	small.Restore([]ClientWindow{long})
	if v := small.Check(wire.Uint128{Lo: 1}, 300-PartitionWindowSize, 300-PartitionWindowSize); v != PartitionBelowWindow {
		t.Fatalf("request below the kept ones: %d", v)
	}
	if v := small.Check(wire.Uint128{Lo: 1}, 300-PartitionWindowSize+1, 300-PartitionWindowSize+1); v != PartitionDuplicate {
		t.Fatalf("oldest kept request: %d", v)
	}
}
