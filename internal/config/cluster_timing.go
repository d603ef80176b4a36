package config

import "time"

// RaftTiming is the reference's cluster timers expressed as raft ticks.
type RaftTiming struct {
	// Tick is the interval of one raft tick.
	Tick time.Duration
	// HeartbeatTicks is raft's HeartbeatTick: a leader heartbeats every
	// HeartbeatTicks ticks.
	HeartbeatTicks int
	// ElectionTicks is raft's ElectionTick: a follower that hears no
	// leader for a random time in [ElectionTicks, 2*ElectionTicks) ticks
	// campaigns, and a CheckQuorum leader that hears no quorum for
	// ElectionTicks steps down.
	ElectionTicks int
}

// Tick-mapping limits.
const (
	// MaxRaftTick is the longest tick; shorter commit_broadcast_intervals
	// shorten it.
	MaxRaftTick = 100 * time.Millisecond
	// MinRaftTick is the reference's consensus tick; durations round down
	// to multiples of it.
	MinRaftTick = 10 * time.Millisecond
)

// RaftTiming maps heartbeat_timeout and commit_broadcast_interval onto
// raft ticks:
//
//   - Tick = min(100 ms, commit_broadcast_interval), rounded down to a
//     multiple of the reference's 10 ms tick (at least one). 100 ms keeps
//     thousands of active groups cheap to tick.
//   - HeartbeatTicks = commit_broadcast_interval / Tick (at least 1): the
//     reference's commit broadcast is its heartbeat.
//   - ElectionTicks = heartbeat_timeout / (4 * Tick), at least
//     HeartbeatTicks+1 (raft needs election > heartbeat). The reference
//     starts a view change once a backup has heard nothing for
//     heartbeat_timeout; raft fires after a random timeout in [E, 2E), so
//     a quarter keeps even one split-vote retry (2E + 2E) inside
//     heartbeat_timeout. With the defaults (5 s, 500 ms): Tick 100 ms,
//     HeartbeatTicks 5, ElectionTicks 12, so a dead leader is replaced
//     after 1.2 s to 2.4 s.
//
// The mapping is Iggo's choice; the reference runs VSR and has no such
// parameters.
func (cl *ClusterConfig) RaftTiming() RaftTiming {
	cb := cl.CommitBroadcastInterval.Std()
	tick := min(MaxRaftTick, cb)
	tick = tick / MinRaftTick * MinRaftTick
	if tick < MinRaftTick {
		tick = MinRaftTick
	}
	hb := max(1, int(cb/tick))
	el := max(hb+1, int(cl.HeartbeatTimeout.Std()/(4*tick)))
	return RaftTiming{Tick: tick, HeartbeatTicks: hb, ElectionTicks: el}
}
