package replication

import (
	"fmt"

	"go.etcd.io/raft/v3/confchange"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
)

// ConfReplay follows a group's membership through the configuration
// entries of its log, as raft applies them, for a state machine that
// replays its committed entries itself before the group is added (a
// partition's start-up replay from the log's headers). The membership it
// reached goes to GroupOptions.Conf, with GroupOptions.Applied at or past
// the last entry given to Apply, and raft resumes from there instead of
// applying the log again from its snapshot.
type ConfReplay struct {
	trk   tracker.ProgressTracker
	index uint64 // last configuration entry applied (0: none)
}

// NewConfReplay starts from cs, the membership of the log's snapshot
// (the storage's InitialState).
func NewConfReplay(cs *raftpb.ConfState) (*ConfReplay, error) {
	c := &ConfReplay{trk: tracker.MakeProgressTracker(1, 0)}
	cfg, prs, err := confchange.Restore(confchange.Changer{Tracker: c.trk}, cs)
	if err != nil {
		return nil, fmt.Errorf("restore membership %v: %w", cs, err)
	}
	c.trk.Config, c.trk.Progress = cfg, prs
	return c, nil
}

// Apply applies committed configuration entry e (EntryConfChange or
// EntryConfChangeV2; other entries are ignored), with raft's rules: a
// change it would refuse is an error, and the membership is left as it
// was.
func (c *ConfReplay) Apply(e *raftpb.Entry) error {
	var cc *raftpb.ConfChangeV2
	switch e.GetType() {
	case raftpb.EntryConfChange:
		v1 := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), v1); err != nil {
			return fmt.Errorf("configuration entry %d: %w", e.GetIndex(), err)
		}
		cc = v1.AsV2()
	case raftpb.EntryConfChangeV2:
		cc = &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("configuration entry %d: %w", e.GetIndex(), err)
		}
	default:
		return nil
	}
	chg := confchange.Changer{Tracker: c.trk}
	var (
		cfg tracker.Config
		prs tracker.ProgressMap
		err error
	)
	if cc.LeaveJoint() {
		cfg, prs, err = chg.LeaveJoint()
	} else if autoLeave, ok := cc.EnterJoint(); ok {
		cfg, prs, err = chg.EnterJoint(autoLeave, cc.GetChanges()...)
	} else {
		cfg, prs, err = chg.Simple(cc.GetChanges()...)
	}
	if err != nil {
		return fmt.Errorf("configuration entry %d: %w", e.GetIndex(), err)
	}
	c.trk.Config, c.trk.Progress = cfg, prs
	c.index = e.GetIndex()
	return nil
}

// Index returns the index of the last configuration entry applied (0:
// none since NewConfReplay).
func (c *ConfReplay) Index() uint64 { return c.index }

// State returns the membership reached.
func (c *ConfReplay) State() *raftpb.ConfState { return c.trk.ConfState() }

// replayedConf is a group's storage as raft sees it when the membership
// was replayed (GroupOptions.Conf): InitialState reports the replayed
// membership in place of the snapshot's. raft reads it once, when the
// group is created; everything else is the storage's.
type replayedConf struct {
	LogStorage
	cs *raftpb.ConfState
}

// InitialState returns the stored hard state and the replayed membership.
func (r replayedConf) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	hs, _, err := r.LogStorage.InitialState()
	return hs, proto.CloneOf(r.cs), err
}
