package replicated

import (
	"sync"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/partition/commit"
)

// requests is the one owner of duplicate detection for a replicated
// partition: it knows every windowed request (a client's request number
// and body hash, commit.Key) at each stage of its life on this node.
//
//   - A handler of this node has it in flight: Begin/End on the
//     partition's commit.Window, so a retry arriving meanwhile waits for
//     the outcome.
//   - It is in the group's raft log, appended or accepted but not yet
//     applied (inLog, by index; inflightUnbound until appended, and
//     forgotten when the next append does not bring it: raft replaced it
//     before it was stored): the leader refuses another copy
//     (errInFlight, answered 57), so a retry after a 57 or a failover
//     never puts a second copy in the log, even when the first is still
//     uncommitted in a new leader's log.
//   - It applied: a successful apply enters the duplicate window
//     (commit.Window), and the leader refuses another copy
//     (errDuplicate, answered like a duplicate); a failed apply is
//     recorded as missed (missedWindow), so the window rebuilt for a
//     snapshot (stateAt) leaves it out as apply did.
//
// The log stages are kept on the host's loop (the log wrapper's appends,
// the Prepare hook, apply), the handler stage on the handlers'
// goroutines; the mutex makes start-up and tests race-free.
type requests struct {
	window *commit.Window
	missed missedWindow

	mu sync.Mutex
	// inLog maps keys of unapplied windowed entries to their log index.
	inLog map[commit.Key]uint64
	// accepted lists the keys accepted since the last append.
	accepted []commit.Key
}

func newRequests(w *commit.Window) *requests {
	return &requests{window: w, inLog: map[commit.Key]uint64{}}
}

// check returns errInFlight for a request whose earlier copy is in the
// log unapplied, errDuplicate for one already committed, else nil.
func (r *requests) check(key commit.Key) error {
	r.mu.Lock()
	_, busy := r.inLog[key]
	r.mu.Unlock()
	switch {
	case busy:
		return errInFlight
	case r.window.Committed(key):
		return errDuplicate
	}
	return nil
}

// accept records a request raft has just admitted (not yet appended).
func (r *requests) accept(key commit.Key) {
	r.mu.Lock()
	r.inLog[key] = inflightUnbound
	r.accepted = append(r.accepted, key)
	r.mu.Unlock()
}

// bind records the windowed entries among ents at their index (appended
// to the log).
func (r *requests) bind(ents []*raftpb.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range ents {
		if e.GetType() != raftpb.EntryNormal {
			continue
		}
		if key, ok := windowKeyOf(e.GetData()); ok {
			r.inLog[key] = e.GetIndex()
		}
	}
}

// dropUnbound forgets the requests accepted and not bound by the append
// that just ran: raft replaced their entries before they were stored
// (stampLog).
func (r *requests) dropUnbound() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.accepted {
		if r.inLog[k] == inflightUnbound {
			delete(r.inLog, k)
		}
	}
	clear(r.accepted)
	r.accepted = r.accepted[:0]
}

// cut forgets the requests of entries at or after index from: raft
// replaced them.
func (r *requests) cut(from uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, at := range r.inLog {
		if at >= from {
			delete(r.inLog, k)
		}
	}
}

// reset forgets every request in the log (a snapshot replaced it).
func (r *requests) reset() {
	r.mu.Lock()
	clear(r.inLog)
	clear(r.accepted)
	r.accepted = r.accepted[:0]
	r.mu.Unlock()
}

// applied records the outcome of the windowed entry at index with key
// (apply, on the loop): its request leaves the log stage and, when its
// apply succeeded (ok), enters the window; otherwise it is missed.
func (r *requests) applied(index uint64, key commit.Key, ok bool) {
	r.leave(index, key)
	if ok {
		r.window.Commit(key)
	} else {
		r.missed.add(index)
	}
}

// leave takes the request of the windowed entry at index out of the log
// stage (an entry that applied, or that apply skipped).
func (r *requests) leave(index uint64, key commit.Key) {
	r.mu.Lock()
	if at, in := r.inLog[key]; in && (at <= index || at == inflightUnbound) {
		delete(r.inLog, key)
	}
	r.mu.Unlock()
}

// inflightUnbound marks a key accepted by raft but not yet appended.
const inflightUnbound = ^uint64(0)
