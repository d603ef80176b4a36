package metadata

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// DefaultSnapshotEvery is the number of entries between snapshots (the
// reference checkpoints when its 1024 journal slots fill).
const DefaultSnapshotEvery = 1024

// Config configures a Store.
type Config struct {
	// Dir is the metadata directory ({system.path}/metadata); created when
	// missing.
	Dir string
	// Now is the clock that stamps entries (time.Now when nil).
	Now func() time.Time
	// Logger receives recovery and effect errors (slog.Default when nil).
	Logger *slog.Logger
	// Data is the partition plane (a no-op when nil).
	Data catalog.Data
	// Hasher hashes passwords (root on first start, CREATE_USER,
	// CHANGE_PASSWORD).
	Hasher *auth.Hasher
	// ClientsTableMax is the client-table capacity.
	ClientsTableMax int
	// MaxTokensPerUser is the PAT cap checked before commit (52).
	MaxTokensPerUser uint32
	// SnapshotEvery is the number of entries between snapshots
	// (DefaultSnapshotEvery when 0).
	SnapshotEvery int
	// Root returns the root credentials; it is called on first start only
	// (semantics.md §2.1: once metadata exists the stored root wins).
	Root func() (username, password string, err error)
	// RebalancingTimeout is consumer_group.rebalancing_timeout: how long
	// a partition may stay pending revocation (rounded up to a
	// microsecond; groups.DefaultRebalancingTimeout when 0).
	RebalancingTimeout time.Duration
	// After waits on Now's clock for RunRevocations (time.After when
	// nil); tests inject a fake clock through Now and After together.
	After func(time.Duration) <-chan time.Time
	// Replicator, when set, puts every entry through the metadata raft
	// group (cluster mode, replicated.go): no local journal is written,
	// and Open neither creates the root user nor ends memberships (the
	// leader does, LeaderDuties).
	Replicator Replicator
	// ClusterID is the header's cluster field of committed replies in
	// cluster mode.
	ClusterID wire.Uint128
	// OnRoster, in cluster mode, is told the roster each time a
	// KindRoster entry applies and when a raft snapshot that holds one is
	// restored. It runs on the replication loop and must not block.
	OnRoster func(roster []byte)
	// OnPlacement, in cluster mode, is told each time a KindPlacement
	// entry applies (a replica move started, finished or was given up)
	// and when a raft snapshot is restored. It runs on the replication
	// loop and must not block.
	OnPlacement func()
	// Placer chooses the replicas of new partitions (cluster mode); nil
	// leaves partitions unplaced (every node holds them).
	Placer Placer
	// FileIO performs the journal's and snapshots' writes and fsyncs; nil
	// is the operating system. Tests inject disk errors through it.
	FileIO fileio.IO
}

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("metadata: store closed")

// Store is the metadata plane: the durable log, the state machine, the
// client table, and the lookups the rest of the broker needs (auth.Store,
// catalog.Topics, session.Log).
type Store struct {
	cfg   Config
	log   *slog.Logger
	data  catalog.Data
	table *session.ClientTable
	dir   string

	// wmu serializes writers: journal append, apply, effects, snapshots.
	wmu            sync.Mutex
	j              *journal // guarded by wmu
	op             uint64   // last committed op; guarded by wmu
	effectsThrough uint64   // guarded by wmu
	snapOp         uint64   // op of the newest snapshot; guarded by wmu
	failed         error    // sticky journal failure; guarded by wmu
	full           bool     // the last journal append found the disk full; guarded by wmu
	closed         bool     // guarded by wmu

	// mu guards st. Writers hold it (under wmu) only while applying.
	mu sync.RWMutex
	st *state
	// groupMu guards the consumer groups' in-flight marks together with
	// a read lock on mu (see groups.go); a leaf lock.
	groupMu sync.Mutex
	// revWake wakes RunRevocations (capacity 1).
	revWake chan struct{}

	// lastFrame is the reply frame of the command applied last; guarded
	// by mu (written by applyLocked, read by submit under wmu).
	lastFrame []byte
	// waiting hands applied entries to their proposers (cluster mode).
	waiting *replication.Waiters[committed]
}

// Open loads the newest valid snapshot in cfg.Dir, replays the journal
// after it, runs the effects that may not have completed, opens every
// partition of the recovered state and, on first start, creates the root
// user.
func Open(cfg Config) (*Store, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.Data == nil {
		cfg.Data = NopData{}
	}
	if cfg.MaxTokensPerUser == 0 {
		cfg.MaxTokensPerUser = 100
	}
	if cfg.RebalancingTimeout <= 0 {
		cfg.RebalancingTimeout = groups.DefaultRebalancingTimeout
	}
	if r := cfg.RebalancingTimeout % time.Microsecond; r != 0 {
		// Revocations start on microsecond entry timestamps; a whole
		// number of microseconds keeps deadlines on that grid.
		cfg.RebalancingTimeout += time.Microsecond - r
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.FileIO == nil {
		cfg.FileIO = fileio.OS{}
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("create metadata directory: %w", err)
	}
	s := &Store{
		cfg: cfg, log: cfg.Logger, data: cfg.Data, dir: cfg.Dir, st: newState(),
		table:   session.NewClientTable(cfg.ClientsTableMax, nil),
		revWake: make(chan struct{}, 1),
		waiting: replication.NewWaiters[committed](),
	}
	if s.replicated() {
		if err := s.recoverReplicated(); err != nil {
			return nil, err
		}
		return s, nil
	}
	if err := s.recover(); err != nil {
		return nil, err
	}
	if s.op == 0 {
		if err := s.bootstrap(); err != nil {
			s.j.close()
			return nil, err
		}
	}
	// No client is connected after a restart: end the memberships of the
	// previous run through the log, so replay stays deterministic.
	s.mu.RLock()
	members := s.st.hasMembers()
	s.mu.RUnlock()
	if members {
		if _, err := s.submit(Entry{Kind: KindDropMembers}); err != nil {
			s.j.close()
			return nil, err
		}
	}
	return s, nil
}

// loadSnapshot restores the newest snapshot whose checksum holds, if any,
// and returns the newer snapshots it skipped as damaged (newest first).
func (s *Store) loadSnapshot() ([]*CorruptError, error) {
	snaps, err := listOps(s.dir, snapshotPrefix, snapshotSuffix)
	if err != nil {
		return nil, fmt.Errorf("list metadata directory: %w", err)
	}
	var skipped []*CorruptError
	for i := len(snaps) - 1; i >= 0; i-- {
		path := filepath.Join(s.dir, snapshotName(snaps[i]))
		data, err := os.ReadFile(path)
		if err == nil {
			var sn *snapshot
			if sn, err = decodeSnapshot(data); err == nil && sn.op == snaps[i] {
				if err := s.table.Restore(sn.clients); err != nil {
					return nil, &CorruptError{File: path, Detail: "client table: " + err.Error()}
				}
				s.st, s.op, s.snapOp, s.effectsThrough = sn.state, sn.op, sn.op, sn.op
				return skipped, nil
			}
			if err == nil {
				err = ErrCorrupt
			}
		}
		s.log.Warn("skipping unreadable metadata snapshot; the older snapshot and the journal stand in for it", "file", path, "err", err)
		skipped = append(skipped, &CorruptError{File: path, Detail: err.Error() + ", and the journal no longer holds the operations it covered"})
	}
	return skipped, nil
}

// recover restores the snapshot and replays the journal tail.
func (s *Store) recover() error {
	removeTemps(s.dir)
	skipped, err := s.loadSnapshot()
	if err != nil {
		return err
	}
	rec, err := readJournals(s.dir, s.op)
	if ce, ok := errors.AsType[*CorruptError](err); ok && ce.File == s.dir && len(skipped) > 0 {
		// Ops are missing because a damaged snapshot held them: name it.
		err = skipped[0]
	}
	if err != nil {
		return err
	}
	if rec.truncated {
		s.log.Warn("metadata journal had a torn tail record; it was dropped (the operation was never acknowledged)")
	}
	// Effects through the newest recorded EffectsThrough completed before
	// the crash; later ones may not have.
	done := s.effectsThrough
	for i := range rec.entries {
		done = max(done, rec.entries[i].EffectsThrough)
	}
	for i := range rec.entries {
		e := &rec.entries[i]
		s.mu.Lock()
		res := s.applyLocked(e)
		s.mu.Unlock()
		s.op = e.Op
		if e.Op > done {
			s.runEffects(res.effects)
		}
	}
	s.effectsThrough = s.op
	first := rec.lastFirst
	if first == 0 {
		first = s.op + 1
	}
	if s.j, err = openJournal(s.cfg.FileIO, s.dir, first); err != nil {
		return fmt.Errorf("open metadata journal: %w", err)
	}
	s.openPartitions()
	if len(rec.entries) > 0 {
		s.log.Info("metadata recovered", "snapshot_op", s.snapOp, "replayed", len(rec.entries), "op", s.op)
	}
	return nil
}

// openPartitions makes the partition plane open every partition of the
// recovered state.
func (s *Store) openPartitions() {
	type job struct {
		ref catalog.TopicRef
		ids []uint32
	}
	var jobs []job
	s.mu.RLock()
	for _, sid := range sortedKeys(s.st.streams) {
		st := s.st.streams[sid]
		for _, tid := range sortedKeys(st.Topics) {
			t := st.Topics[tid]
			// One call per purge identity: partitions created after a
			// purge are not covered by it (catalog.TopicRef.PurgedAt).
			for i := 0; i < len(t.Partitions); {
				r := purgeRef(st, t, t.Partitions[i].PurgedAt)
				var ids []uint32
				for ; i < len(t.Partitions) && t.Partitions[i].PurgedAt == r.PurgedAt; i++ {
					ids = append(ids, t.Partitions[i].ID)
				}
				jobs = append(jobs, job{placedRef(r, t, ids), ids})
			}
		}
	}
	s.mu.RUnlock()
	for _, j := range jobs {
		if err := s.data.CreatePartitions(j.ref, j.ids); err != nil {
			s.log.Error("open partitions", "stream", j.ref.StreamID, "topic", j.ref.TopicID, "err", err)
		}
	}
}

// bootstrap creates the root user on first start.
func (s *Store) bootstrap() error {
	name, password := "iggy", "iggy"
	if s.cfg.Root != nil {
		var err error
		if name, password, err = s.cfg.Root(); err != nil {
			return err
		}
	}
	if s.cfg.Hasher == nil {
		return errors.New("metadata: no password hasher for the root user")
	}
	hash, err := s.cfg.Hasher.Hash(password)
	if err != nil {
		return fmt.Errorf("hash root password: %w", err)
	}
	_, err = s.submit(Entry{Kind: KindBootstrap, Body: []byte(name), Secret: []byte(hash)})
	return err
}

// committed is the outcome of a submitted entry.
type committed struct {
	entry Entry
	res   result
	// frame is the reply frame cached in the client table (commands only).
	frame []byte
}

// submit commits e: it assigns op and timestamp, appends and fsyncs the
// record, applies it, runs its effects and takes a snapshot when due.
func (s *Store) submit(e Entry) (committed, error) {
	if s.replicated() {
		return s.propose(e)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.submitLocked(e)
}

// submitLocked is submit with wmu held.
func (s *Store) submitLocked(e Entry) (committed, error) {
	if s.closed {
		return committed{}, ErrClosed
	}
	if s.failed != nil {
		return committed{}, s.failed
	}
	e.Op = s.op + 1
	e.Timestamp = uint64(s.cfg.Now().UnixMicro())
	e.EffectsThrough = s.effectsThrough
	if err := s.j.append(&e); err != nil {
		if errors.Is(err, ErrDiskFull) {
			// Cut back: nothing of e is on disk or applied.
			s.reportFullLocked(err)
			return committed{}, err
		}
		// The record may or may not be on disk: refuse everything after it.
		s.failed = fmt.Errorf("metadata journal failed, restart required: %w", err)
		s.log.Error("metadata journal write failed", "op", e.Op, "err", err)
		return committed{}, s.failed
	}
	if s.full {
		s.full = false
		s.log.Info("metadata journal writes again: disk space is back")
	}
	c := s.commitLocked(&e)
	res := c.res
	for _, f := range res.effects {
		if !f.idempotent() {
			// Record that the purge or segment deletion completed so a
			// restart does not repeat it.
			if err := s.appendMarkerLocked(); err != nil {
				return c, nil
			}
			break
		}
	}
	if res.revoking {
		// A JOIN deferred every move (groups.go): complete at once the
		// ones without in-flight data, before the JOIN is answered.
		if _, err := s.completeDueLocked(); err != nil {
			return c, nil
		}
		s.wakeRevocations()
	}
	if s.op-s.snapOp >= uint64(s.cfg.SnapshotEvery) {
		if err := s.snapshotLocked(); err != nil {
			s.log.Error("metadata snapshot failed", "op", s.op, "err", err)
		}
	}
	return c, nil
}

// commitLocked applies the committed entry e (the journal or the raft log
// holds it), runs its partition-plane effects and returns its outcome.
// Caller holds wmu.
func (s *Store) commitLocked(e *Entry) committed {
	s.op = e.Op
	s.mu.Lock()
	res := s.applyLocked(e)
	s.mu.Unlock()
	c := committed{entry: *e, res: res}
	if e.Kind == KindCommand {
		c.frame = s.lastFrame
	}
	s.runEffects(res.effects)
	s.effectsThrough = e.Op
	return c
}

func (s *Store) appendMarkerLocked() error {
	m := Entry{Op: s.op + 1, Kind: KindMarker, Timestamp: uint64(s.cfg.Now().UnixMicro()), EffectsThrough: s.effectsThrough}
	if err := s.j.append(&m); err != nil {
		s.failed = fmt.Errorf("metadata journal failed, restart required: %w", err)
		s.log.Error("metadata journal write failed", "op", m.Op, "err", err)
		return err
	}
	s.op = m.Op
	s.effectsThrough = m.Op
	return nil
}

// runEffects performs effects on the partition plane, logging failures:
// the metadata change is committed either way.
func (s *Store) runEffects(effects []effect) {
	for _, f := range effects {
		if err := f.run(s.data); err != nil {
			s.log.Error("partition-plane effect failed", "stream", f.ref.StreamID, "topic", f.ref.TopicID, "effect", f.kind, "err", err)
		}
	}
}

// applyLocked applies e to the state and the client table. Caller holds
// s.mu for writing (and wmu, or is recovering). For a command it leaves
// the cached reply frame in s.lastFrame.
func (s *Store) applyLocked(e *Entry) result {
	switch e.Kind {
	case KindBootstrap:
		s.st.applyBootstrap(e)
	case KindRegister:
		s.table.Apply(sessionEntry(e))
	case KindLogout:
		s.table.Apply(sessionEntry(e))
		s.st.removeClient(e.Client)
	case KindDropMembers:
		s.st.eachGroup(func(_ *stream, _ *topic, g *group) { g.G.DropMembers() })
	case KindCompleteRevocations:
		s.st.applyCompleteRevocations(e)
	case KindPATCleanup:
		s.st.applyPATCleanup(e)
	case KindRoster:
		s.st.roster = append([]byte(nil), e.Body...)
	case KindRevokeToken:
		s.st.applyRevokeToken(e)
	case KindPlacement:
		return s.st.applyPlacement(e)
	case KindCommand:
		res := s.st.applyCommand(e)
		info, _ := wire.LookupCommand(e.Code)
		body := replyBody(res)
		if res.secret {
			body = wire.AppendResultError(nil, wire.ErrPersonalAccessTokenAlreadyExists.Code)
		}
		frame := replyFrame(e, info.ReplyOperation, body)
		s.table.Commit(e.Client, e.Request, e.RequestChecksum, e.Op, frame)
		s.lastFrame = frame
		return res
	}
	return result{}
}

// replyBody is the result-framed body of res.
func replyBody(res result) []byte {
	if res.code != 0 {
		return wire.AppendResultError(nil, res.code)
	}
	return append(wire.AppendResultOK(nil), res.payload...)
}

// replyFrame builds the committed reply frame for e exactly as the
// dispatcher does for a committed reply: cluster 0 (in cluster mode the
// cluster id, view = the raft term and replica = the proposing leader),
// op and commit = the entry's op, the request's client, checksum,
// timestamp and number.
func replyFrame(e *Entry, op wire.Operation, body []byte) []byte {
	h := wire.ReplyHeader{
		Prologue:        wire.Prologue{Cluster: e.Cluster, View: e.View, Replica: e.Replica, Size: uint32(wire.HeaderSize + len(body))},
		RequestChecksum: e.RequestChecksum,
		Client:          e.Client,
		Op:              e.Op,
		Commit:          e.Op,
		Timestamp:       e.RequestTimestamp,
		Request:         e.Request,
		Operation:       op,
	}
	frame := make([]byte, 0, wire.HeaderSize+len(body))
	frame = h.AppendTo(frame)
	return append(frame, body...)
}

func sessionEntry(e *Entry) session.Entry {
	k := session.EntryRegister
	if e.Kind == KindLogout {
		k = session.EntryLogout
	}
	return session.Entry{
		Op: e.Op, Kind: k, Client: e.Client, Session: e.Session, Request: e.Request,
		UserID: e.UserID, Timestamp: e.Timestamp,
	}
}

// snapshotLocked writes a snapshot of the current state, starts a new
// journal file and prunes old files. Caller holds wmu.
func (s *Store) snapshotLocked() error {
	s.mu.RLock()
	s.groupMu.Lock() // the groups' in-flight marks are encoded too
	data := encodeSnapshot(&snapshot{op: s.op, state: s.st, clients: s.table.Snapshot()})
	s.groupMu.Unlock()
	s.mu.RUnlock()
	if err := writeSnapshotFile(s.cfg.FileIO, s.dir, s.op, data); err != nil {
		return err
	}
	s.snapOp = s.op
	if s.j != nil && s.j.first <= s.op {
		nj, err := openJournal(s.cfg.FileIO, s.dir, s.op+1)
		if err != nil {
			return err
		}
		s.j.close()
		s.j = nj
	}
	return prune(s.dir)
}

// Snapshot writes a snapshot now (tests and benchmarks use it).
func (s *Store) Snapshot() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.snapshotLocked()
}

// Close writes a final snapshot when entries were committed since the
// last one and closes the journal. Later writes fail with ErrClosed.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.failed == nil && s.op > s.snapOp {
		err = s.snapshotLocked()
	}
	if s.j != nil {
		err = errors.Join(err, s.j.close())
	}
	return err
}

// Op returns the last committed op.
func (s *Store) Op() uint64 {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.op
}

// Table returns the client table the store feeds.
func (s *Store) Table() *session.ClientTable { return s.table }

// Append implements session.Log: a Register or Logout is committed
// through the journal like any metadata operation.
func (s *Store) Append(e session.Entry) (session.Entry, error) {
	k := KindRegister
	if e.Kind == session.EntryLogout {
		k = KindLogout
	}
	c, err := s.submit(Entry{Kind: k, Client: e.Client, Session: e.Session, Request: e.Request, UserID: e.UserID})
	if err != nil {
		return session.Entry{}, err
	}
	return sessionEntry(&c.entry), nil
}

// NopData is a catalog.Data that stores nothing.
type NopData struct{}

// CreatePartitions implements catalog.Data.
func (NopData) CreatePartitions(catalog.TopicRef, []uint32) error { return nil }

// DeletePartitions implements catalog.Data.
func (NopData) DeletePartitions(catalog.TopicRef, []uint32) error { return nil }

// DeleteTopic implements catalog.Data.
func (NopData) DeleteTopic(catalog.TopicRef) error { return nil }

// PurgeTopic implements catalog.Data.
func (NopData) PurgeTopic(catalog.TopicRef) error { return nil }

// DeleteSegments implements catalog.Data.
func (NopData) DeleteSegments(catalog.TopicRef, uint32, uint32) error { return nil }

// DeleteGroupOffsets implements catalog.Data.
func (NopData) DeleteGroupOffsets(catalog.TopicRef, uint32) error { return nil }

// PartitionStats implements catalog.Data.
func (NopData) PartitionStats(catalog.TopicRef, uint32) catalog.PartitionStats {
	return catalog.PartitionStats{}
}
