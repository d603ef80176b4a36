package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// TestAdminCode: a failed administration step answers what
// replication.Transient decides, 1 for anything else.
func TestAdminCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want *wire.Error
	}{
		{"leadership moved", fmt.Errorf("metadata group: %w", &replication.NotLeaderError{}), wire.ErrTransientNotAccepted},
		{"deadline before admission", fmt.Errorf("group 3: change membership of group 3: %w", context.DeadlineExceeded), wire.ErrTransientNotAccepted},
		{"deadline after admission", fmt.Errorf("group 3: %w: %w", replication.ErrOutcomeUnknown, context.DeadlineExceeded), wire.ErrTransientNotCommitted},
		{"group gone", fmt.Errorf("group 3: %w", replication.ErrUnknownGroup), wire.ErrTransientNotAccepted},
		{"roster outcome unknown", fmt.Errorf("commit the roster: %w: %w", metadata.ErrOutcomeUnknown, context.DeadlineExceeded), wire.ErrTransientNotCommitted},
		{"roster not accepted", fmt.Errorf("commit the roster: %w: %w", metadata.ErrNotAccepted, replication.ErrProposalDropped), wire.ErrTransientNotAccepted},
		{"roster refused", errors.New("commit the roster: invalid"), wire.ErrError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := adminCode(tc.err); got != tc.want.Code {
				t.Fatalf("adminCode(%v) = %d, want %d", tc.err, got, tc.want.Code)
			}
		})
	}
}
