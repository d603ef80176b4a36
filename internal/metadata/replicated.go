package metadata

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// Replicator is the metadata plane's view of the metadata raft group
// (cluster mode). With a Replicator the store keeps no journal of its own:
// every entry is one raft entry (one journal record, tagged, see
// appendProposal), and the group's log is the metadata log.
type Replicator interface {
	// Propose commits data through the group; it returns once the entry
	// is committed on a quorum and applied here. Only the leader admits
	// it; elsewhere it fails with replication.ErrNotLeader.
	Propose(ctx context.Context, data []byte) error
	// Forward hands data to the leader from any node; the store then
	// waits for its own apply of the entry.
	Forward(ctx context.Context, data []byte) error
	// IsLeader reports whether this node leads the group now.
	IsLeader() bool
	// Self is this node's replica id (the header's replica field of the
	// replies it commits).
	Self() uint8
}

// ReplicaTimeout bounds one replicated write: proposing, committing on a
// quorum and applying here. Past it the outcome is unknown (57).
const ReplicaTimeout = 5 * time.Second

// Transient outcomes of a replicated write.
var (
	// ErrNotAccepted: the entry was never admitted (not the leader, no
	// leader, dropped by raft): safe to re-issue anywhere (58).
	ErrNotAccepted = errors.New("metadata: not accepted by the metadata leader")
	// ErrOutcomeUnknown: the entry may or may not commit (57). It wraps
	// session.ErrOutcomeUnknown so a Register answers 57 too, and
	// replication.ErrOutcomeUnknown so replication.Transient answers 57
	// whatever cause it wraps (the store's own wait ending, for one,
	// whose bare context error alone would read as never admitted).
	ErrOutcomeUnknown = fmt.Errorf("metadata: outcome of the replicated write unknown: %w: %w", session.ErrOutcomeUnknown, replication.ErrOutcomeUnknown)
)

// proposalVersion leads every metadata raft entry.
const proposalVersion = 1

// proposedOp is the op a proposed record carries (records need a non-zero
// op); every node applies the entry at its raft index instead.
const proposedOp = ^uint64(0)

// proposalHeaderLen is version u8, nonce u64, replica u8.
const proposalHeaderLen = 10

// appendProposal encodes e as a raft entry: the proposing node's nonce
// (so that node recognizes the apply of its own entry) and replica id,
// then the entry as one journal record.
func appendProposal(dst []byte, nonce uint64, replica uint8, e *Entry) []byte {
	dst = append(dst, proposalVersion)
	dst = binary.LittleEndian.AppendUint64(dst, nonce)
	dst = append(dst, replica)
	return AppendRecord(dst, e)
}

// decodeProposal reverses appendProposal.
func decodeProposal(src []byte) (nonce uint64, replica uint8, e Entry, err error) {
	if len(src) < proposalHeaderLen || src[0] != proposalVersion {
		return 0, 0, Entry{}, fmt.Errorf("%w: metadata raft entry header", ErrCorrupt)
	}
	nonce = binary.LittleEndian.Uint64(src[1:9])
	replica = src[9]
	e, n, err := DecodeRecord(src[proposalHeaderLen:])
	if err != nil {
		return 0, 0, Entry{}, err
	}
	if proposalHeaderLen+n != len(src) {
		return 0, 0, Entry{}, fmt.Errorf("%w: trailing bytes after the metadata record", ErrCorrupt)
	}
	return nonce, replica, e, nil
}

// replicated reports whether the store runs in cluster mode.
func (s *Store) replicated() bool { return s.cfg.Replicator != nil }

// IsLeader reports whether this node may commit metadata writes: always
// on a single node, on the metadata group's leader in a cluster.
func (s *Store) IsLeader() bool { return s.cfg.Replicator == nil || s.cfg.Replicator.IsLeader() }

// Bootstrapped reports whether the root user exists (in a cluster, once
// the first leader's bootstrap entry applied here).
func (s *Store) Bootstrapped() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.st.users) > 0
}

// propose commits e through the metadata group: the leader stamps the
// timestamp, proposes, and answers from its own apply. A Register or
// Logout on a follower is forwarded to the leader (cluster-contract.md
// §3: login works on every node), and the follower waits for its own
// apply of that entry, so the session it binds is in its table. An HTTP
// token revocation (KindRevokeToken) is forwarded the same way: an HTTP
// logout works on every node, and once it is answered the token is
// refused on the node that answered. A placement change is forwarded
// too: a partition's leader completes a move it carried out wherever it
// runs.
func (s *Store) propose(e Entry) (committed, error) {
	s.wmu.Lock()
	closed := s.closed
	s.wmu.Unlock()
	if closed {
		return committed{}, ErrClosed
	}
	r := s.cfg.Replicator
	e.Timestamp = uint64(s.cfg.Now().UnixMicro())
	nonce, ch := s.waiting.Add()
	defer s.waiting.Remove(nonce)
	e.Op = proposedOp // the raft index replaces it when the entry applies
	data := appendProposal(nil, nonce, r.Self(), &e)
	ctx, cancel := context.WithTimeout(context.Background(), ReplicaTimeout)
	defer cancel()
	forward := (e.Kind == KindRegister || e.Kind == KindLogout || e.Kind == KindRevokeToken || e.Kind == KindPlacement) && !r.IsLeader()
	var err error
	if forward {
		err = r.Forward(ctx, data)
	} else {
		err = r.Propose(ctx, data)
	}
	if err != nil {
		return committed{}, classify(err)
	}
	select {
	case c := <-ch:
		if c.res.revoking {
			s.completeDueReplicated()
			s.wakeRevocations()
		}
		if err := s.awaitEffects(c.res.effects); err != nil {
			return committed{}, err
		}
		return c, nil
	case <-ctx.Done():
		return committed{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// awaitEffects waits, up to ReplicaTimeout, until the purges and
// group-offset deletions among effects have applied to this node's
// partitions (catalog.Awaiter: in cluster mode they go through each
// partition's raft log after the metadata entry applies), so a poll right
// after the reply sees them. Past the timeout the reply is 57: the
// command is committed and its partition entries will still apply.
func (s *Store) awaitEffects(effects []effect) error {
	aw, ok := s.data.(catalog.Awaiter)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReplicaTimeout)
	defer cancel()
	for _, f := range effects {
		if f.kind != effPurgeTopic && f.kind != effDeleteGroupOffsets {
			continue
		}
		if err := aw.AwaitPartitions(ctx, f.ref); err != nil {
			s.log.Warn("purge or group-offset deletion not yet applied to the partitions; answered 57, it still applies",
				"stream", f.ref.StreamID, "topic", f.ref.TopicID, "err", err)
			return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
		}
	}
	return nil
}

// classify maps a replication error to ErrNotAccepted (58) or
// ErrOutcomeUnknown (57) as replication.Transient decides; an error it
// does not know is treated as outcome unknown.
func classify(err error) error {
	if code, ok := replication.Transient(err); ok && code == wire.ErrTransientNotAccepted.Code {
		return fmt.Errorf("%w: %w", ErrNotAccepted, err)
	}
	return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
}

// transientCode is the result code of a failed write: 58 when it was
// never admitted (or the store is closed), 57 when its outcome is
// unknown, as replication.Transient decides (ErrOutcomeUnknown wraps
// replication.ErrOutcomeUnknown); an error nobody classifies is 57.
func transientCode(err error) uint32 {
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrNotAccepted) {
		return wire.ErrTransientNotAccepted.Code
	}
	if errors.Is(err, ErrDiskFull) {
		// Definitely not committed (the journal was cut back).
		return wire.ErrCannotWriteToFile.Code
	}
	if code, ok := replication.Transient(err); ok {
		return code
	}
	return wire.ErrTransientNotCommitted.Code
}

// ApplyReplicated applies one committed entry of the metadata group (the
// replication host's loop calls it in commit order). The raft index is the
// entry's op, so session epochs and topic incarnations are the same on
// every node. An index the store already holds (restart from its own
// snapshot) is skipped.
func (s *Store) ApplyReplicated(index, term uint64, data []byte) {
	nonce, replica, e, err := decodeProposal(data)
	if err != nil {
		s.log.Error("metadata raft entry does not decode; skipped", "index", index, "err", err)
		return
	}
	e.Op = index
	e.View, e.Replica, e.Cluster = uint32(term), replica, s.cfg.ClusterID
	s.wmu.Lock()
	if index <= s.op {
		s.wmu.Unlock()
		return
	}
	e.EffectsThrough = s.effectsThrough
	if e.Kind == KindCommand && e.Request != 0 {
		if frame, done := s.table.Applied(e.Client, e.Request); done {
			// Committed twice (a retry admitted by a new leader before it
			// applied the first copy): answer from the first, change
			// nothing.
			if frame == nil {
				info, _ := wire.LookupCommand(e.Code)
				frame = replyFrame(&e, info.ReplyOperation, wire.AppendResultError(nil, wire.ErrRequestAlreadyApplied.Code))
			}
			s.op = index
			s.wmu.Unlock()
			s.waiting.Deliver(nonce, committed{entry: e, frame: frame})
			return
		}
	}
	c := s.commitLocked(&e)
	res := c.res
	if e.Kind == KindRoster && s.cfg.OnRoster != nil {
		s.cfg.OnRoster(e.Body)
	}
	if e.Kind == KindPlacement && s.cfg.OnPlacement != nil {
		s.cfg.OnPlacement()
	}
	snap := s.op-s.snapOp >= uint64(s.cfg.SnapshotEvery)
	for _, f := range res.effects {
		// A purge or segment deletion must not run again when a restart
		// replays the log: snapshot right after it instead of writing a
		// marker entry (a follower cannot append to the log).
		if !f.idempotent() {
			snap = true
		}
	}
	if snap {
		if err := s.snapshotLocked(); err != nil {
			s.log.Error("metadata snapshot failed", "op", s.op, "err", err)
		}
	}
	s.wmu.Unlock()
	s.waiting.Deliver(nonce, c)
	if res.revoking {
		s.wakeRevocations()
	}
}

// SnapshotReplicated encodes the whole state at the last applied entry,
// for the metadata group's raft snapshot (compaction, a lagging follower).
func (s *Store) SnapshotReplicated() ([]byte, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	s.groupMu.Lock()
	data := encodeSnapshot(&snapshot{op: s.op, state: s.st, clients: s.table.Snapshot()})
	s.groupMu.Unlock()
	s.mu.RUnlock()
	return data, nil
}

// RestoreReplicated replaces the state with a raft snapshot taken at
// index (a follower too far behind, or a restart whose raft snapshot is
// newer than the store's own), writes it as the store's snapshot and opens
// the partitions it names.
func (s *Store) RestoreReplicated(index uint64, data []byte) error {
	sn, err := decodeSnapshot(data)
	if err != nil {
		return fmt.Errorf("metadata raft snapshot at %d: %w", index, err)
	}
	s.wmu.Lock()
	if index <= s.op {
		s.wmu.Unlock()
		return nil
	}
	if err := s.table.Restore(sn.clients); err != nil {
		s.wmu.Unlock()
		return fmt.Errorf("metadata raft snapshot at %d: client table: %w", index, err)
	}
	s.mu.Lock()
	s.st = sn.state
	s.mu.Unlock()
	s.op, s.effectsThrough = index, index
	if err := s.snapshotLocked(); err != nil {
		s.log.Error("metadata snapshot failed", "op", s.op, "err", err)
	}
	s.wmu.Unlock()
	if sn.state.roster != nil && s.cfg.OnRoster != nil {
		s.cfg.OnRoster(sn.state.roster)
	}
	s.openPartitions()
	if s.cfg.OnPlacement != nil {
		s.cfg.OnPlacement()
	}
	s.log.Info("metadata restored from a raft snapshot", "op", index)
	return nil
}

// LeaderDuties runs what only the metadata leader may commit on taking
// over: the root user on a fresh cluster (IGGY_ROOT_USERNAME/PASSWORD,
// read by the leader that creates it), and the end of every consumer-group
// membership of the previous leader's connections (clients reconnect and
// join again, as after a single-node restart). The broker calls it each
// time this node becomes the leader.
func (s *Store) LeaderDuties() error {
	s.mu.RLock()
	fresh := len(s.st.users) == 0
	members := s.st.hasMembers()
	s.mu.RUnlock()
	if fresh {
		if err := s.bootstrap(); err != nil {
			return fmt.Errorf("create the root user: %w", err)
		}
	}
	if members {
		if _, err := s.submit(Entry{Kind: KindDropMembers}); err != nil {
			return fmt.Errorf("end the memberships of the previous leader: %w", err)
		}
	}
	return nil
}

// completeDueReplicated commits the completion of the revocations due now
// through the metadata group (the cluster twin of completeDueLocked).
func (s *Store) completeDueReplicated() (int, error) {
	if !s.IsLeader() {
		return 0, nil // the leader's timer completes them
	}
	items := s.dueRevocations()
	if len(items) == 0 {
		return 0, nil
	}
	if _, err := s.propose(Entry{Kind: KindCompleteRevocations, Body: appendRevItems(nil, items)}); err != nil {
		return 0, err
	}
	return len(items), nil
}

// recoverReplicated loads the newest valid snapshot (cluster mode keeps
// no journal: the entries after the snapshot come back from the raft
// log) and opens the partitions it names. A data directory holding a
// single-node journal is refused: its ops are not raft indexes.
func (s *Store) recoverReplicated() error {
	removeTemps(s.dir)
	journals, err := listOps(s.dir, journalPrefix, journalSuffix)
	if err != nil {
		return fmt.Errorf("list metadata directory: %w", err)
	}
	if len(journals) > 0 {
		return fmt.Errorf("metadata directory %s holds a single-node journal: cluster mode needs a data directory of its own (start the node on an empty system.path)", s.dir)
	}
	// A damaged snapshot is skipped: the raft log and the peers' snapshots
	// bring the state back.
	if _, err := s.loadSnapshot(); err != nil {
		return err
	}
	s.openPartitions()
	return nil
}

// Roster returns the cluster roster of the last committed KindRoster
// entry, nil when none committed (the configured roster holds).
func (s *Store) Roster() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.roster
}

// CommitRoster commits a new cluster roster through the metadata group
// (the leader only).
func (s *Store) CommitRoster(roster []byte) error {
	_, err := s.submit(Entry{Kind: KindRoster, Body: roster})
	return err
}
