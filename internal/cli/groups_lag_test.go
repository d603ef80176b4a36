package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// groupGet is the part of `group get -o json` the tests look at.
type groupGet struct {
	MembersCount uint32            `json:"members_count"`
	Offsets      []groupOffsetView `json:"offsets"`
	TotalLag     *uint64           `json:"total_lag"`
}

func u64(v uint64) *uint64 { return &v }

func TestGroupGetShowsLag(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "3")
	e.ok("group", "create", "s", "t", "g")
	e.ok("send", "s", "t", "--partition", "0", "a", "b", "c", "d")
	e.ok("send", "s", "t", "--partition", "1", "e", "f")
	// The group reads 3 messages of partition 0 and commits them.
	if ms := e.poll("s", "t", "--group", "g", "--auto-commit", "-n", "3"); len(ms) != 3 {
		t.Fatalf("group poll: %+v", ms)
	}
	var g groupGet
	e.okJSON(&g, "group", "get", "s", "t", "g")
	want := []groupOffsetView{
		{Partition: 0, Committed: u64(2), End: u64(3), Lag: 1},
		{Partition: 1, End: u64(1), Lag: 2},
		{Partition: 2, Lag: 0},
	}
	if !cmp.Equal(g.Offsets, want) || g.TotalLag == nil || *g.TotalLag != 3 {
		t.Fatalf("group get offsets = %+v, total %v; want %+v, total 3", g.Offsets, g.TotalLag, want)
	}
	out := e.ok("group", "get", "s", "t", "g")
	wantLines(t, out, "Total lag:", "PARTITION  MEMBER  COMMITTED  END  LAG")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "Total lag: 3") ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "0 - 2 3 1 1 - - 1 2 2 - - - 0") {
		t.Fatalf("group get table:\n%s", out)
	}
}
