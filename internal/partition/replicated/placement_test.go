package replicated

import (
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
)

// TestBootstrapVotersFollowPlacement: a group created while its metadata
// entry applies starts with its replica list, a joining replica with no
// members, and an unplaced partition with every voter.
func TestBootstrapVotersFollowPlacement(t *testing.T) {
	all := []replication.NodeID{0, 1, 2, 3, 4}
	for _, tc := range []struct {
		name   string
		voters []replication.NodeID
		part   Partition
		want   []replication.NodeID
	}{
		{"placed", all, Partition{Replicas: []uint8{3, 0, 4}}, []replication.NodeID{3, 0, 4}},
		{"unplaced", all, Partition{}, all},
		{"joining", all, Partition{Replicas: []uint8{3, 0, 4}, Joining: true}, nil},
		{"start-up", nil, Partition{Replicas: []uint8{3, 0, 4}}, nil},
	} {
		if got := bootstrapVoters(tc.voters, tc.part); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPreferenceFollowsMoves: the leader preference of a group is its
// replica list, replaced when a move changes it.
func TestPreferenceFollowsMoves(t *testing.T) {
	s := New(hostless{}, Options{Logger: quiet()})
	defer s.Close()
	ref := catalog.TopicRef{StreamID: 1, TopicID: 2, Incarnation: 7}
	// Registered as Add does, without starting the group (it has no log).
	g := GroupID(ref, 3)
	rep := &Replica{set: s, group: g, ref: ref}
	rep.setPreference([]uint8{2, 0, 1})
	s.mu.Lock()
	s.groups[g] = rep
	s.mu.Unlock()
	if got := s.Preference(g); !reflect.DeepEqual(got, []replication.NodeID{2, 0, 1}) {
		t.Fatalf("preference %v", got)
	}
	s.SetReplicas(ref, 3, []uint8{4, 0, 1})
	if got := s.Preference(g); !reflect.DeepEqual(got, []replication.NodeID{4, 0, 1}) {
		t.Fatalf("preference after the move %v", got)
	}
	if s.Preference(GroupID(ref, 4)) != nil {
		t.Fatal("a partition not held here has a preference")
	}
}
