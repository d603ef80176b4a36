package broker

import (
	"errors"
	"testing"

	"github.com/iggo-dev/iggo/internal/replication"
)

// fakeMetadata records what the metadata machine hands the store.
type fakeMetadata struct {
	cl         *cluster
	applied    []uint64
	liveDuring []bool
	restoreErr error
	restored   []uint64
}

func (f *fakeMetadata) ApplyReplicated(index, term uint64, data []byte) {
	f.applied = append(f.applied, index)
	f.liveDuring = append(f.liveDuring, f.cl.liveApply.Load())
}

func (f *fakeMetadata) SnapshotReplicated() ([]byte, error) { return []byte("snap"), nil }

func (f *fakeMetadata) RestoreReplicated(index uint64, data []byte) error {
	if f.restoreErr != nil {
		return f.restoreErr
	}
	f.restored = append(f.restored, index)
	return nil
}

// TestMetadataMachine: entries reach the store with liveApply set only
// while they apply; a restored snapshot moves compacted up, never down,
// and a failed restore leaves it alone.
func TestMetadataMachine(t *testing.T) {
	cl := &cluster{}
	store := &fakeMetadata{cl: cl}
	m := metadataMachine{store: store, cl: cl}
	m.Apply(replication.Entry{Index: 7, Term: 2, Data: []byte("x")})
	if len(store.applied) != 1 || store.applied[0] != 7 || !store.liveDuring[0] {
		t.Fatalf("apply: applied %v, liveApply during %v", store.applied, store.liveDuring)
	}
	if cl.liveApply.Load() {
		t.Fatal("liveApply still set after the apply")
	}
	if data, err := m.Snapshot(); err != nil || string(data) != "snap" {
		t.Fatalf("snapshot: %q, %v", data, err)
	}
	for _, tc := range []struct {
		name  string
		index uint64
		err   error
		want  uint64
	}{
		{"first restore", 10, nil, 10},
		{"older snapshot", 5, nil, 10},
		{"newer snapshot", 20, nil, 20},
		{"failed restore", 30, errors.New("bad snapshot"), 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.restoreErr = tc.err
			if err := m.Restore(tc.index, nil); !errors.Is(err, tc.err) {
				t.Fatalf("restore: %v, want %v", err, tc.err)
			}
			if got := cl.compacted.Load(); got != tc.want {
				t.Fatalf("compacted %d, want %d", got, tc.want)
			}
		})
	}
}
