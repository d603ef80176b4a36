package broker

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iggo-dev/iggo/internal/replication"
)

// fakePartitions records the plane calls of partition machines.
type fakePartitions struct{ calls []string }

func (f *fakePartitions) ApplyReplicated(g replication.GroupID, e replication.Entry) {
	f.calls = append(f.calls, fmt.Sprintf("apply %d %d", g, e.Index))
}

func (f *fakePartitions) SnapshotReplicated(g replication.GroupID) ([]byte, error) {
	f.calls = append(f.calls, fmt.Sprintf("snapshot %d", g))
	return nil, nil
}

func (f *fakePartitions) RestoreReplicated(g replication.GroupID, index uint64, data []byte) error {
	f.calls = append(f.calls, fmt.Sprintf("restore %d %d", g, index))
	return nil
}

// TestWithPartitionMachine: a group without a machine gets one that
// routes to the plane under its own group id; a given machine is kept.
func TestWithPartitionMachine(t *testing.T) {
	parts := &fakePartitions{}
	opts := withPartitionMachine(replication.GroupOptions{}, parts, 4)
	if opts.Machine == nil {
		t.Fatal("no machine set")
	}
	opts.Machine.Apply(replication.Entry{Index: 3})
	if _, err := opts.Machine.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := opts.Machine.Restore(9, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply 4 3", "snapshot 4", "restore 4 9"}, parts.calls); diff != "" {
		t.Fatalf("plane calls (-want +got):\n%s", diff)
	}
	own := partitionMachine{parts: parts, g: 8}
	if got := withPartitionMachine(replication.GroupOptions{Machine: own}, parts, 4).Machine; got != own {
		t.Fatalf("the given machine was replaced by %#v", got)
	}
}
