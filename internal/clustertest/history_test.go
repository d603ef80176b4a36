//go:build !windows

package clustertest

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
)

// Outcome is how a recorded operation ended.
type Outcome int

const (
	// OK: the server acknowledged it (for an append: committed at Offset).
	OK Outcome = iota
	// Failed: it provably did not happen (never sent, or refused with an
	// error code other than 57).
	Failed
	// Unknown: sent without a usable answer (timeout, connection lost,
	// 57 TransientNotCommitted); it may or may not have happened.
	Unknown
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// OpKind is append (SEND_MESSAGES of one message) or read (POLL of the
// whole partition).
type OpKind int

// Operation kinds.
const (
	Append OpKind = iota
	// Read goes to the node the client believes leads: it must be
	// linearizable.
	Read
	// LocalRead goes to any node, follower included: the contract allows
	// it to lag (cluster-contract.md §6), so it is not part of the
	// linearizability check, but what it returns must be a prefix of the
	// final log (a node never serves uncommitted or divergent messages).
	LocalRead
)

// Op is one recorded client operation.
type Op struct {
	Client    int
	Kind      OpKind
	Partition uint32
	// MsgID is the appended message's id (Append).
	MsgID uint64
	// Offset is the acknowledged offset (Append, OK).
	Offset uint64
	// Log is the partition content read, message ids by offset (Read, OK).
	Log []uint64
	// Call and Return are nanoseconds since the history began.
	Call, Return int64
	Outcome      Outcome
	// Code is the server's error code of a Failed or Unknown operation (0
	// for I/O).
	Code uint32
	// Node is the replica the request went to.
	Node int
	Err  error
	// Dup marks an append acknowledged as a duplicate of an earlier
	// attempt (success without a confirmation): it took effect, at an
	// offset the answer does not say.
	Dup bool
	// Retries counts the re-sends of the request (RetryingProducer).
	Retries int
	// Final marks the read of a partition made after every other operation
	// had completed (Verify adds one per partition).
	Final bool
}

// History records operations from concurrent clients.
type History struct {
	mu    sync.Mutex
	start time.Time
	ops   []Op
}

// NewHistory starts an empty history; times count from now.
func NewHistory() *History { return &History{start: time.Now()} }

// Now returns the history clock.
func (h *History) Now() int64 { return time.Since(h.start).Nanoseconds() }

// At converts a wall-clock instant to the history clock.
func (h *History) At(t time.Time) int64 { return t.Sub(h.start).Nanoseconds() }

// Add records a completed operation.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns a copy of the operations recorded so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// Counts tallies operations by kind and outcome.
type Counts struct {
	Appends, Acked, AppendFailed, AppendUnknown int
	Reads, ReadsOK                              int
	LocalReads, LocalReadsOK                    int
	// Codes counts the answers of appends that were not acknowledged:
	// "58", "57", "io" (no answer), "evicted", ...
	Codes map[string]int
}

// Count tallies ops.
func Count(ops []Op) Counts {
	c := Counts{Codes: map[string]int{}}
	for _, op := range ops {
		switch op.Kind {
		case Append:
			c.Appends++
			if op.Outcome != OK {
				c.Codes[answerName(op)]++
			}
			switch op.Outcome {
			case OK:
				c.Acked++
			case Failed:
				c.AppendFailed++
			case Unknown:
				c.AppendUnknown++
			}
		case Read:
			c.Reads++
			if op.Outcome == OK {
				c.ReadsOK++
			}
		case LocalRead:
			c.LocalReads++
			if op.Outcome == OK {
				c.LocalReadsOK++
			}
		}
	}
	return c
}

// answerName names how a request that was not acknowledged was answered.
func answerName(op Op) string {
	var ioe *local.IOError
	var ev *local.EvictionError
	switch {
	case op.Code != 0:
		return strconv.Itoa(int(op.Code))
	case errors.As(op.Err, &ioe) && ioe.Sent:
		return "no answer"
	case errors.As(op.Err, &ioe):
		return "not sent"
	case errors.As(op.Err, &ev):
		return "evicted"
	}
	return "other"
}

// String summarizes the counts.
func (c Counts) String() string {
	return fmt.Sprintf("%d appends (%d acknowledged, %d failed, %d unknown; not acknowledged by answer %v), %d leader reads (%d ok), %d any-node reads (%d ok)",
		c.Appends, c.Acked, c.AppendFailed, c.AppendUnknown, c.Codes, c.Reads, c.ReadsOK, c.LocalReads, c.LocalReadsOK)
}

// logInput is the porcupine input of an operation on the log model.
type logInput struct {
	Kind      OpKind
	Partition uint32
	MsgID     uint64
}

// logOutput is the porcupine output: Known is false for an append of
// unknown outcome (it may take effect at any point after its call, or
// never, which porcupine expresses by linearizing it after everything
// else). A read is represented by the length and the fold (logFold) of
// the log it returned, so a model step costs O(1) whatever the log size.
type logOutput struct {
	Known  bool
	Offset uint64
	Len    uint64
	Fold   uint64
}

// logState is the model state: the length of the log and the fold of its
// message ids in offset order.
type logState struct {
	Len  uint64
	Fold uint64
}

// foldID extends the fold of a log by one message id (a splitmix64 step
// over the running value, so order and position matter; two different
// logs of one length collide with probability about 2^-64).
func foldID(fold, id uint64) uint64 {
	z := fold ^ id + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// logFold returns the model state of a whole log.
func logFold(ids []uint64) logState {
	s := logState{}
	for _, id := range ids {
		s = logState{Len: s.Len + 1, Fold: foldID(s.Fold, id)}
	}
	return s
}

// Porcupine converts ops to a porcupine history: acknowledged appends and
// successful reads as they happened, failed operations and failed reads
// left out (they had no effect and observed nothing), and appends of
// unknown outcome left open (returning at the end of time).
//
// An open append is resolved with the final read of its partition (a read
// invoked after every other operation completed), which porcupine would
// otherwise have to rediscover by trying every order of the open appends:
// one the final read holds at offset k took effect at k (a known offset,
// still open), one it lacks never took effect before that read, and as
// nothing observes the log later it is left out, which is equivalent to
// linearizing it last. This prunes the search without changing the
// verdict.
func Porcupine(ops []Op) []porcupine.Operation {
	final := map[uint32]map[uint64]uint64{}
	for _, op := range ops {
		if op.Final && op.Outcome == OK {
			at := make(map[uint64]uint64, len(op.Log))
			for off, id := range op.Log {
				if _, dup := at[id]; !dup {
					at[id] = uint64(off)
				}
			}
			final[op.Partition] = at
		}
	}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		in := logInput{Kind: op.Kind, Partition: op.Partition, MsgID: op.MsgID}
		switch {
		case op.Kind == LocalRead, op.Outcome == Failed, op.Kind == Read && op.Outcome != OK:
			continue
		case op.Outcome == Unknown, op.Dup:
			// Open (or acknowledged without an offset): resolved by the
			// final read when it has one. An acknowledged duplicate keeps
			// its return time, so a final read without it is illegal.
			ret := int64(math.MaxInt64)
			if op.Dup {
				ret = op.Return
			}
			o := logOutput{}
			if at, ok := final[op.Partition]; ok {
				off, stored := at[op.MsgID]
				switch {
				case stored:
					o = logOutput{Known: true, Offset: off}
				case !op.Dup:
					continue
				}
			}
			out = append(out, porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Call, Output: o, Return: ret})
		default:
			o := logOutput{Known: true, Offset: op.Offset}
			if op.Kind == Read {
				st := logFold(op.Log)
				o.Len, o.Fold = st.Len, st.Fold
			}
			out = append(out, porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Call, Output: o, Return: op.Return})
		}
	}
	return out
}
