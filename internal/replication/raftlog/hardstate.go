package raftlog

import (
	"fmt"
	"os"
	"path/filepath"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// SetHardState stores term, vote and commit.
//
// A change of term or vote is always durable before SetHardState returns:
// the hardstate file is replaced atomically (temp file, fsync, rename,
// directory fsync), whatever Options.Sync says, because a forgotten vote
// or term lets a node vote twice in one term.
//
// A change of commit alone is written in place into the small commit file
// with write(2) and no fsync. That is safe because the commit index is
// not a promise made to anyone: after a crash that loses it, the node
// restarts with the older commit from the hardstate file (never a newer
// one), and raft learns the real commit index again from the leader (or,
// on a leader, recomputes it from its followers' match indexes). The one
// caller-side consequence: a host restarting raft must not pass an
// applied index above the commit that InitialState returns.
func (l *Log) SetHardState(st *pb.HardState) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	if (st == nil && l.hs == nil) || (st != nil && l.hs != nil && proto.Equal(st, l.hs)) {
		return nil
	}
	rec := hardStateRecord{seq: l.hsSeq + 1}
	if st != nil {
		rec.hs = proto.CloneOf(st)
	}
	payload, err := encodeHardState(rec)
	if err != nil {
		return err
	}
	if sameTermVote(rec.hs, l.durable.hs) {
		err = l.writeCommit(payload)
	} else {
		err = writeFileAtomic(l.opts.FileIO, l.dir, hardStateFile, payload)
		if err == nil {
			l.durable = rec
		}
	}
	if err != nil {
		return l.fail(fmt.Errorf("set hard state: %w", err))
	}
	l.hs, l.hsSeq = rec.hs, rec.seq
	return nil
}

// sameTermVote reports whether a and b (both stored) have equal term and
// vote, so that only the commit index differs.
func sameTermVote(a, b *pb.HardState) bool {
	return a != nil && b != nil && a.GetTerm() == b.GetTerm() && a.GetVote() == b.GetVote()
}

// writeCommit overwrites the commit file with one record, without fsync.
// A torn record there fails its checksum on Open and the hardstate file's
// commit is used instead.
func (l *Log) writeCommit(payload []byte) error {
	if l.commitFd == nil {
		f, err := os.OpenFile(filepath.Join(l.dir, commitFile), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("open commit file: %w", err)
		}
		l.commitFd = f
	}
	if _, err := l.opts.FileIO.WriteAt(l.commitFd, appendRecord(nil, payload), 0); err != nil {
		return fmt.Errorf("write commit file: %w", err)
	}
	return nil
}
