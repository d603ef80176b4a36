package metadata

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

// rotatingPlacer places rf replicas of nodes 0..n-1, starting one node
// further for each partition; it refuses rf above n like the broker's.
type rotatingPlacer struct {
	n     int
	calls int
	seen  int // partitions placed before the last call
}

func (p *rotatingPlacer) Place(existing [][]uint8, rf uint8, count int) ([][]uint8, error) {
	p.calls++
	p.seen = len(existing)
	if rf == 0 {
		rf = 3
	}
	if int(rf) > p.n {
		return nil, fmt.Errorf("%w: %d > %d", wire.ErrInvalidReplicationFactor, rf, p.n)
	}
	out := make([][]uint8, count)
	for i := range out {
		for j := 0; j < int(rf); j++ {
			out[i] = append(out[i], uint8((len(existing)+i+j)%p.n))
		}
	}
	return out, nil
}

// placeData records placed CreatePartitions calls and SetReplicas.
type placeData struct {
	recData
	placed map[uint32][]uint8
	moves  []string
}

func (d *placeData) CreatePartitions(t catalog.TopicRef, ids []uint32) error {
	if d.placed == nil {
		d.placed = map[uint32][]uint8{}
	}
	for _, id := range ids {
		d.placed[id] = t.Placement[id]
	}
	return nil
}

func (d *placeData) SetReplicas(t catalog.TopicRef, partition uint32, replicas []uint8) error {
	d.moves = append(d.moves, fmt.Sprintf("%d/%d/%d %v", t.StreamID, t.TopicID, partition, replicas))
	return nil
}

// createPlaced commits a command the way the placed handler does: the
// Placer's lists in the Secret.
func (s *testStore) createPlaced(t *testing.T, code wire.Command, body wire.Body, rf uint8, n int) (result, uint32) {
	t.Helper()
	secret, deny := s.placeFor(rf, n)
	if deny != 0 {
		return result{}, deny
	}
	c, err := s.submit(Entry{Kind: KindCommand, Code: code, Body: body.AppendTo(nil), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c.res, 0
}

// TestPlacementCommittedAndKept: replica lists chosen before commit are
// applied, handed to the partition plane, kept across a restart
// (snapshot and log), changed by a placement entry, and a replication
// factor the Placer refuses is denied with 2018.
func TestPlacementCommittedAndKept(t *testing.T) {
	dir := t.TempDir()
	data := &placeData{}
	placer := &rotatingPlacer{n: 5}
	s := openTest(t, dir, 1000, nil)
	s.cfg.Data, s.Store.data, s.cfg.Placer = data, data, placer
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s"})
	if _, deny := s.createPlaced(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 4, Name: "t"}, 0, 4); deny != 0 {
		t.Fatalf("create topic denied %d", deny)
	}
	if _, deny := s.createPlaced(t, wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), PartitionsCount: 2}, 2, 2); deny != 0 {
		t.Fatalf("create partitions denied %d", deny)
	}
	if placer.seen != 4 {
		t.Errorf("second placement saw %d existing lists, want 4", placer.seen)
	}
	if _, deny := s.createPlaced(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 1, Name: "big"}, 6, 1); deny != wire.ErrInvalidReplicationFactor.Code {
		t.Fatalf("rf 6 of 5 nodes: deny %d, want 2018", deny)
	}
	want := map[uint32][]uint8{0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0}, 5: {0, 1}}
	if !reflect.DeepEqual(data.placed, want) {
		t.Fatalf("placed %v, want %v", data.placed, want)
	}
	ps := s.Placements()
	if len(ps) != 6 || !reflect.DeepEqual(ps[3].Replicas, []uint8{3, 4, 0}) {
		t.Fatalf("Placements() = %+v", ps)
	}
	ref := ps[0].Ref
	if err := s.CommitPlacement(context.Background(), ref, 1, []uint8{1, 2, 3}, []uint8{1, 2, 4}); err != nil {
		t.Fatal(err)
	}
	if r, tg := s.Placement(ref, 1); !reflect.DeepEqual(r, []uint8{1, 2, 3}) || !reflect.DeepEqual(tg, []uint8{1, 2, 4}) {
		t.Fatalf("during the move Placement = %v, %v", r, tg)
	}
	if err := s.CommitPlacement(context.Background(), ref, 1, []uint8{1, 2, 4}, nil); err != nil {
		t.Fatal(err)
	}
	if r, tg := s.Placement(ref, 1); !reflect.DeepEqual(r, []uint8{1, 2, 4}) || tg != nil {
		t.Fatalf("after the move Placement = %v, %v", r, tg)
	}
	// During the move the target comes first (the leader preference).
	if want := []string{"0/0/1 [1 2 4 3]", "0/0/1 [1 2 4]"}; !reflect.DeepEqual(data.moves, want) {
		t.Fatalf("SetReplicas calls %v, want %v", data.moves, want)
	}
	stale := ref
	stale.Incarnation++
	if err := s.CommitPlacement(context.Background(), stale, 1, []uint8{0}, nil); !errors.Is(err, ErrPlacementStale) {
		t.Fatalf("placement of another incarnation: %v", err)
	}
	if err := s.CommitPlacement(context.Background(), ref, 1, []uint8{2, 2}, nil); err == nil {
		t.Fatal("a list with a duplicate was committed")
	}
	before := s.encoded()
	s.Close()

	for _, every := range []int{1000, 1} { // replayed from the log, then from a snapshot
		data2 := &placeData{}
		r := openTest(t, dir, every, nil)
		r.cfg.Data, r.Store.data = data2, data2
		if !reflect.DeepEqual(r.encoded(), before) {
			t.Fatalf("state after restart (snapshot every %d) differs", every)
		}
		if got := r.Replicas(ref, 1); !reflect.DeepEqual(got, []uint8{1, 2, 4}) {
			t.Fatalf("after restart Replicas = %v", got)
		}
		if err := r.Snapshot(); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
}

// TestPlacementEncoding: a placement decodes only for the expected count
// and distinct replicas.
func TestPlacementEncoding(t *testing.T) {
	lists := [][]uint8{{0, 1, 2}, {2, 0, 1}}
	b := encodePlacement(lists)
	if got := decodePlacement(b, 2); !reflect.DeepEqual(got, lists) {
		t.Fatalf("round trip %v", got)
	}
	for _, bad := range [][]byte{nil, b[:4], b[:len(b)-1], encodePlacement([][]uint8{{1, 1}})} {
		if got := decodePlacement(bad, len(lists)); got != nil && len(bad) == len(b) {
			t.Errorf("decoded %x as %v", bad, got)
		}
	}
	if decodePlacement(b, 3) != nil {
		t.Error("a placement of 2 lists decoded for 3 partitions")
	}
	if decodePlacement(encodePlacement([][]uint8{{1, 1}}), 1) != nil {
		t.Error("a list with a duplicate decoded")
	}
}
