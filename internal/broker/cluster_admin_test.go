package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/internal/config"
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

// TestCheckNewNodeRacks: a node added to a cluster whose nodes have racks
// needs one, and one with a rack is refused where no node has one.
func TestCheckNewNodeRacks(t *testing.T) {
	node := func(id uint8, rack string) config.ClusterNode {
		return config.ClusterNode{Name: fmt.Sprint("n", id), IP: "127.0.0.1", ReplicaID: id, Rack: rack,
			Ports: config.ClusterPorts{TCP: 9000 + uint16(id), TCPReplica: 9100 + uint16(id)}}
	}
	racked := []config.ClusterNode{node(0, "a"), node(1, "b")}
	plain := []config.ClusterNode{node(0, ""), node(1, "")}
	for _, tc := range []struct {
		roster []config.ClusterNode
		n      config.ClusterNode
		ok     bool
	}{
		{racked, node(2, "a"), true},
		{racked, node(2, ""), false},
		{plain, node(2, ""), true},
		{plain, node(2, "a"), false},
	} {
		if err := checkNewNode(tc.roster, tc.n); (err == nil) != tc.ok {
			t.Errorf("roster racks %q, new rack %q: %v", tc.roster[0].Rack, tc.n.Rack, err)
		}
	}
}
