package metadata

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
)

// The root user carries its real creation time (the commit time of the
// bootstrap entry), not the reference's sentinel 1 ("1970-01-01"), and
// keeps it across a restart.
func TestRootUserCreatedAtIsReal(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 0, nil)
	root, ok := s.UserByID(auth.RootUserID)
	if !ok {
		t.Fatal("no root user")
	}
	start := uint64(s.clock.t.UnixMicro()) - 60_000_000 // the fake clock runs ahead a second per reading
	if root.CreatedAt == auth.RootCreatedAt || root.CreatedAt < start {
		t.Fatalf("root created_at %d, want the bootstrap time (about %d)", root.CreatedAt, start)
	}
	s.Close()
	again := openTest(t, dir, 0, nil)
	defer again.Close()
	if r, _ := again.UserByID(auth.RootUserID); r.CreatedAt != root.CreatedAt {
		t.Fatalf("after restart created_at %d, want %d", r.CreatedAt, root.CreatedAt)
	}
}
