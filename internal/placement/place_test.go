package placement

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPlaceRejects(t *testing.T) {
	three := makeNodes(3, 0)
	for _, c := range []struct {
		name  string
		nodes []Node
		rf    int
		count int
		want  error
		text  string
	}{
		{"rf 0", three, 0, 1, ErrReplicationFactor, "0 replicas per partition with 3 nodes"},
		{"rf above nodes", three, 4, 1, ErrReplicationFactor, "4 replicas per partition with 3 nodes"},
		{"no nodes", nil, 1, 1, ErrReplicationFactor, "1 replicas per partition with 0 nodes"},
		{"duplicate", []Node{{ID: 1}, {ID: 1}}, 1, 1, ErrDuplicateNode, "1"},
		{"partial racks", []Node{{ID: 0, Rack: "a"}, {ID: 1}}, 1, 1, ErrPartialRacks, `node 0 has rack "a", node 1 has none`},
		{"negative count", three, 1, -1, nil, "negative partition count -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Place(c.nodes, nil, c.rf, c.count)
			if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("got %v, want %v naming %q", err, c.want, c.text)
			}
		})
	}
}

func TestCheckRacks(t *testing.T) {
	if on, err := CheckRacks(makeNodes(3, 0)); on || err != nil {
		t.Fatalf("no racks: %v %v", on, err)
	}
	if on, err := CheckRacks(makeNodes(3, 2)); !on || err != nil {
		t.Fatalf("racks: %v %v", on, err)
	}
	if _, err := CheckRacks([]Node{{ID: 0}, {ID: 5, Rack: "b"}}); !errors.Is(err, ErrPartialRacks) {
		t.Fatalf("partial: %v", err)
	}
}

func TestPlaceTable(t *testing.T) {
	for _, c := range []struct {
		name                    string
		nodes                   []Node
		rf, count               int
		replicas, leaders, span int // per node (exact), racks per list (at least)
	}{
		{"3 nodes rf 3", makeNodes(3, 0), 3, 3, 3, 1, 0},
		{"5 nodes rf 3", makeNodes(5, 0), 3, 10, 6, 2, 0},
		{"4 nodes rf 1", makeNodes(4, 0), 1, 8, 2, 2, 0},
		{"6 nodes in 3 racks rf 3", makeNodes(6, 3), 3, 12, 6, 2, 3},
		{"4 nodes in 2 racks rf 2", makeNodes(4, 2), 2, 8, 4, 2, 2},
		{"6 nodes in 2 racks rf 3", makeNodes(6, 2), 3, 12, 6, 2, 2},
		{"9 nodes in 3 racks rf 3", makeNodes(9, 3), 3, 90, 30, 10, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			lists, err := Place(c.nodes, nil, c.rf, c.count)
			if err != nil {
				t.Fatal(err)
			}
			checkLists(t, c.nodes, lists, c.rf)
			replicas, leaders := counts(c.nodes, lists)
			for i := range c.nodes {
				if replicas[i] != c.replicas || leaders[i] != c.leaders {
					t.Fatalf("replicas %v leaders %v, want %d and %d each", replicas, leaders, c.replicas, c.leaders)
				}
			}
			for i, l := range lists {
				if n := racksOf(c.nodes, l); n < c.span {
					t.Fatalf("list %d %v spans %d racks, want %d", i, l, n, c.span)
				}
			}
		})
	}
}

// racksOf counts the racks list spans.
func racksOf(nodes []Node, list []uint8) int {
	var racks []string
	for _, r := range list {
		for _, n := range nodes {
			if n.ID == r && !slices.Contains(racks, n.Rack) {
				racks = append(racks, n.Rack)
			}
		}
	}
	return len(racks)
}

// TestPlaceBalancesAgainstLoad: a new partition set goes to the nodes
// the existing placement loads least, and the load is updated.
func TestPlaceBalancesAgainstLoad(t *testing.T) {
	nodes := makeNodes(4, 0)
	existing := [][]uint8{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}
	load := NewLoad(existing)
	lists, err := Place(nodes, load, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if lists[0][0] != 3 {
		t.Fatalf("got %v, want node 3 (no replica, no leader) to lead", lists[0])
	}
	if load.Replicas(3) != 1 || load.Leaders(3) != 1 || load.Replicas(0)+load.Replicas(1)+load.Replicas(2) != 11 {
		t.Fatalf("load not updated: %d %d", load.Replicas(3), load.Leaders(3))
	}
	load.Remove(lists[0])
	if load.Replicas(3) != 0 || load.Leaders(3) != 0 {
		t.Fatal("remove did not uncount")
	}
}

func TestPlaceDeterministic(t *testing.T) {
	nodes := makeNodes(7, 3)
	a, err := Place(nodes, nil, 3, 500)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Place(nodes, nil, 3, 500)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Fatal("two calls on the same input differ")
	}
}

// TestPlaceLarge: 12 nodes, 10,000 partitions, rf 3 in one call: every
// node within one replica and one leader of the others, quickly.
func TestPlaceLarge(t *testing.T) {
	for _, racks := range []int{0, 3} {
		nodes := makeNodes(12, racks)
		start := time.Now()
		lists, err := Place(nodes, nil, 3, 10000)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		checkLists(t, nodes, lists, 3)
		replicas, leaders := counts(nodes, lists)
		if slices.Max(replicas)-slices.Min(replicas) > 1 || slices.Max(leaders)-slices.Min(leaders) > 1 {
			t.Fatalf("racks %d: replicas %v leaders %v", racks, replicas, leaders)
		}
		for i, l := range lists {
			if racks > 0 && racksOf(nodes, l) != 3 {
				t.Fatalf("list %d %v spans fewer than 3 racks", i, l)
			}
		}
		t.Logf("racks %d: placed in %s", racks, took)
		if took > time.Second {
			t.Fatalf("placement took %s", took)
		}
	}
}

func TestPreferred(t *testing.T) {
	down := map[uint8]bool{4: true, 2: true}
	alive := func(n uint8) bool { return !down[n] }
	for _, c := range []struct {
		list []uint8
		want uint8
		ok   bool
	}{
		{[]uint8{1, 2, 3}, 1, true},
		{[]uint8{4, 2, 3}, 3, true},
		{[]uint8{4, 2}, 0, false},
		{nil, 0, false},
	} {
		if got, ok := Preferred(c.list, alive); got != c.want || ok != c.ok {
			t.Fatalf("Preferred(%v) = %d %v, want %d %v", c.list, got, ok, c.want, c.ok)
		}
	}
}
