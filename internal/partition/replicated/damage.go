package replicated

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/iggo-dev/iggo/internal/replication"
)

// errCommitLost: the raft log ends before the commit index it recorded
// (its file was truncated): it lost entries this node acknowledged.
var errCommitLost = errors.New("partition: the raft log ends before its own commit index (entries it acknowledged are lost)")

// checkCommitHeld fails with errCommitLost when st's last index is below
// its stored commit index. raft would panic on it (the commit is out of
// range); it is found here first so the replica is rebuilt instead.
func checkCommitHeld(st replication.LogStorage) error {
	hs, _, err := st.InitialState()
	if err != nil {
		return err
	}
	last, err := st.LastIndex()
	if err != nil {
		return err
	}
	if c := hs.GetCommit(); c > last {
		return fmt.Errorf("%w: last index %d, commit %d", errCommitLost, last, c)
	}
	return nil
}

// damaged reports that rep's replica did not start because its files
// failed (Options.OnDamaged), unless the cause is a resource this node
// lacks (descriptors, space, permissions, memory): those are not
// damage, and wiping the replica would not help.
func (s *Set) damaged(rep *Replica, err error) {
	if s.opts.OnDamaged == nil || !IsDamage(err) || s.replicaOf(rep.group) != rep {
		return
	}
	s.opts.OnDamaged(rep.ref, rep.part.ID, err)
}

// IsDamage reports whether err, from opening or running a partition
// replica, means its files are damaged rather than that a resource was
// missing (descriptors, space, memory, permissions) or the node is
// stopping.
func IsDamage(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.ENOMEM),
		errors.Is(err, os.ErrPermission),
		errors.Is(err, replication.ErrStopped):
		return false
	}
	return true
}
