package raftlog

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// quietLogger discards log output in tests that do not inspect it.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openT opens a Log in dir or fails the test.
func openT(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

// errClass names the raft error err is, so results can be compared.
func errClass(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, raft.ErrCompacted):
		return "compacted"
	case errors.Is(err, raft.ErrSnapOutOfDate):
		return "snap-out-of-date"
	case errors.Is(err, raft.ErrUnavailable):
		return "unavailable"
	default:
		return "other: " + err.Error()
	}
}

// normSnap returns a copy of s with every pointer field set, the form
// both storages converge to (MemoryStorage's InitialState sets
// ConfState.AutoLeave on its stored snapshot).
func normSnap(s *pb.Snapshot) *pb.Snapshot {
	if s == nil {
		return nil
	}
	return pb.EnsureSnapshot(proto.CloneOf(s))
}

func equalHardState(a, b *pb.HardState) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return proto.Equal(a, b)
}

func equalEntries(a, b []*pb.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// mkEntry builds an entry with every field set.
func mkEntry(index, term uint64, data []byte) *pb.Entry {
	return &pb.Entry{Index: new(index), Term: new(term), Type: pb.EntryNormal.Enum(), Data: data}
}
