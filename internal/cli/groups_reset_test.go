package cli

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGroupReset(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "2")
	e.ok("group", "create", "s", "t", "g")
	e.ok("send", "s", "t", "--partition", "0", "a0", "a1", "a2", "a3")
	time.Sleep(5 * time.Millisecond)
	mark := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(5 * time.Millisecond)
	e.ok("send", "s", "t", "--partition", "0", "a4", "a5")
	e.ok("send", "s", "t", "--partition", "1", "b0", "b1")
	committed := func() []*uint64 {
		t.Helper()
		var g groupGet
		e.okJSON(&g, "group", "get", "s", "t", "g")
		out := make([]*uint64, len(g.Offsets))
		for i, o := range g.Offsets {
			out[i] = o.Committed
		}
		return out
	}
	wantCommitted := func(want ...*uint64) {
		t.Helper()
		if got := committed(); !cmp.Equal(got, want) {
			t.Fatalf("committed %v, want %v", fmtPtrs(got), fmtPtrs(want))
		}
	}

	e.run("group", "reset", "s", "t", "g").wantError(t, ExitUsage, "choose one of")
	e.run("group", "reset", "s", "t", "g", "--to-latest", "--to-earliest").wantError(t, ExitUsage, "choose one of")

	wantLines(t, e.ok("group", "reset", "s", "t", "g", "--to-latest", "--dry-run"), "dry run: nothing stored")
	wantCommitted(nil, nil)

	wantLines(t, e.ok("group", "reset", "s", "t", "g", "--to-latest"), "NEXT OFFSET")
	wantCommitted(u64(5), u64(1))
	if got := e.ok("poll", "s", "t", "--group", "g", "--raw"); got != "" {
		t.Fatalf("after --to-latest the group read %q", got)
	}

	e.ok("group", "reset", "s", "t", "g", "--to-timestamp", mark, "--partition", "0")
	wantCommitted(u64(3), u64(1))
	if got := e.ok("poll", "s", "t", "--group", "g", "--raw"); got != "a4\na5\n" {
		t.Fatalf("after --to-timestamp the group read %q", got)
	}

	e.ok("group", "reset", "s", "t", "g", "--to-offset", "1", "-p", "1")
	wantCommitted(u64(3), u64(0))
	e.run("group", "reset", "s", "t", "g", "--to-offset", "9", "-p", "1").wantError(t, ExitUsage, "ends at offset 2")
	e.run("group", "reset", "s", "t", "g", "--to-earliest", "-p", "7").wantError(t, ExitError, "no partition 7")

	e.ok("group", "reset", "s", "t", "g", "--to-earliest")
	wantCommitted(nil, nil)
	if got := e.ok("poll", "s", "t", "--group", "g", "--raw", "-n", "100", "--auto-commit"); got != "a0\na1\na2\na3\na4\na5\nb0\nb1\n" {
		t.Fatalf("after --to-earliest the group read %q", got)
	}

	// Refused while the group has a member, unless --force; the member
	// keeps its partitions, so --force reports them as not reset.
	ctx, cancel := context.WithCancel(context.Background())
	_, wait := e.startFollow(ctx, "poll", "s", "t", "--follow", "--group", "g", "--raw", "--interval", "5ms")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var g groupGet
		e.okJSON(&g, "group", "get", "s", "t", "g")
		if g.MembersCount == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the following poll did not join")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.run("group", "reset", "s", "t", "g", "--to-earliest").wantError(t, ExitError, "1 member(s)", "--force")
	// With --force it resets the partitions the server hands it; the
	// rest stay with the member and keep their offsets.
	r := e.run("group", "reset", "s", "t", "g", "--to-earliest", "--force")
	r.wantError(t, ExitError, "owned by other members and were not reset")
	if got := committed(); got[0] == nil && got[1] == nil {
		t.Fatalf("--force reset the partitions a member owns:\n%s", r.stdout)
	}
	cancel()
	wait().wantCode(t, ExitOK)
}

func fmtPtrs(ps []*uint64) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = optU64(p)
	}
	return out
}
