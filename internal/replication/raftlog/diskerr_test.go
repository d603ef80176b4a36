package raftlog

import (
	"errors"
	"syscall"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// TestDiskErrorFailsLog: a write or fsync error of an entry file (EIO or
// ENOSPC alike) fails the Append, so raft never acknowledges those entries
// (the host stops the group: replication.Host.storageFailed), and the log
// refuses every later append without retrying the fsync, even once the
// disk works again. A reopen (restart) recovers the entries that were
// durable before.
func TestDiskErrorFailsLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule fileio.Rule
	}{
		{"fsync eio", fileio.Rule{Ops: fileio.OpSync, Name: "*.log", Err: syscall.EIO}},
		{"fsync enospc", fileio.Rule{Ops: fileio.OpSync, Name: "*.log", Err: syscall.ENOSPC}},
		{"write enospc", fileio.Rule{Ops: fileio.OpWrite, Name: "*.log", Err: syscall.ENOSPC, Partial: 5}},
		{"write eio", fileio.Rule{Ops: fileio.OpWrite, Name: "*.log", Err: syscall.EIO}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			faults := &fileio.Faults{Base: fileio.OS{}}
			l := openT(t, dir, Options{Sync: true, FileIO: faults})
			if err := l.Append([]*pb.Entry{mkEntry(1, 1, []byte("a")), mkEntry(2, 1, []byte("b"))}); err != nil {
				t.Fatal(err)
			}
			faults.Add(tc.rule)
			if err := l.Append([]*pb.Entry{mkEntry(3, 1, []byte("c"))}); !errors.Is(err, tc.rule.Err) {
				t.Fatalf("append on a failing disk: %v, want %v", err, tc.rule.Err)
			}
			faults.Clear()
			err := l.Append([]*pb.Entry{mkEntry(3, 1, []byte("c"))})
			if err == nil {
				t.Fatal("append after a failed write succeeded: the log must stay failed")
			}
			if n := faults.Injected(); n != 1 {
				t.Fatalf("%d injected failures, want 1 (no retry)", n)
			}
			_ = l.Close()
			l = openT(t, dir, Options{Sync: true})
			defer func() { _ = l.Close() }()
			last, err := l.LastIndex()
			if err != nil || last < 2 {
				t.Fatalf("reopened log ends at %d (%v), want the two durable entries", last, err)
			}
		})
	}
}
