package replication

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// probeMachine records the calls the host makes to one group's machine.
type probeMachine struct {
	mu        sync.Mutex
	applied   []string
	snapshots int
}

func (m *probeMachine) Apply(e Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applied = append(m.applied, string(e.Data))
}

func (m *probeMachine) Snapshot() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snapshots++
	return []byte(strings.Join(m.applied, ",")), nil
}

func (m *probeMachine) Restore(uint64, []byte) error { return nil }

func (m *probeMachine) state() ([]string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.applied), m.snapshots
}

// TestAddGroupNeedsMachine: a group without a machine is refused and not
// created.
func TestAddGroupNeedsMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, 1, nil)
		err := c.hosts[0].AddGroup(context.Background(), 1, GroupOptions{Voters: []NodeID{0}})
		if err == nil || !strings.Contains(err.Error(), "Machine") {
			t.Fatalf("AddGroup without a machine: %v", err)
		}
		if _, ok := c.hosts[0].Status(1); ok {
			t.Fatal("the group was created without a machine")
		}
	})
}

// TestGroupMachinesPerGroup: each group's entries reach its own machine
// only, and Compact snapshots only the compacted group's machine.
func TestGroupMachinesPerGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, 2, nil)
		h := c.hosts[0]
		ctx := contextWithTimeout(t, 10*time.Second)
		machines := map[GroupID]*probeMachine{1: {}, 2: {}}
		for g, m := range machines {
			c.addGroupOn(0, g, GroupOptions{Voters: []NodeID{0}, Machine: m})
			if _, err := h.WaitFor(ctx, g, func(v View) bool { return v.Role == RoleLeader }); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			for g := range machines {
				if _, err := h.Propose(ctx, g, fmt.Appendf(nil, "g%d-%d", g, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for g, m := range machines {
			got, _ := m.state()
			want := []string{fmt.Sprintf("g%d-0", g), fmt.Sprintf("g%d-1", g), fmt.Sprintf("g%d-2", g)}
			if !slices.Equal(got, want) {
				t.Fatalf("group %d's machine applied %q, want %q", g, got, want)
			}
		}
		if _, err := h.Compact(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if _, n := machines[1].state(); n != 0 {
			t.Fatalf("group 1's machine was snapshotted %d times by a compaction of group 2", n)
		}
		if _, n := machines[2].state(); n != 1 {
			t.Fatalf("group 2's machine was snapshotted %d times, want 1", n)
		}
	})
}
