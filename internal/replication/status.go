package replication

import (
	"context"
	"errors"

	"github.com/iggo-dev/iggo/wire"
)

// Errors a GroupOptions.Prepare hook wraps so that Transient knows what
// its refusal means for the client.
var (
	// ErrRefused: the group refused the proposal before admitting it
	// (for example it is still replaying its log); the request is in no
	// log (58).
	ErrRefused = errors.New("proposal refused by the group before admission")
	// ErrPending: an earlier copy of the same request is still in the
	// log, not yet applied, and its fate is unknown (57).
	ErrPending = errors.New("an earlier copy of the request is still pending in the log")
)

// Transient classifies an error returned by this package's proposal calls
// (Propose, ChangeMembership, Forward, AddMember, or a Prepare hook's
// refusal) as one of the two transient header statuses, so every plane
// answers the same status for the same failure:
//
//   - 57 (wire.ErrTransientNotCommitted, "outcome unknown; retry the
//     same request") when err wraps ErrOutcomeUnknown or ErrPending. The
//     entry was admitted, or an earlier copy of it was, and may still
//     commit: a context that ended after admission, a snapshot that
//     overtook the entry, the host stopping or the group being removed
//     or failing while the entry waited, an append that failed after the
//     leader had already sent it, a new leader's entries that replaced it
//     in this node's log (bindProposals has the rule).
//   - 58 (wire.ErrTransientNotAccepted, "not accepted, the request is
//     certainly not in any log; retry, possibly elsewhere") when err
//     wraps ErrNotLeader (or is a *NotLeaderError), ErrProposalDropped,
//     ErrProposalLost (a different entry committed at its index),
//     ErrRefused, ErrUnknownGroup, ErrGroupRemoved, ErrStopped, or is a
//     context.DeadlineExceeded or context.Canceled without
//     ErrOutcomeUnknown. A bare context or stop error means the call
//     gave up before its proposal reached the host's loop, and the loop
//     never runs it afterwards (Host.do), so the proposal was never
//     admitted; once it was, the error wraps ErrOutcomeUnknown.
//
// ErrOutcomeUnknown and ErrPending win over the 58 errors when both are
// wrapped. For anything else ok is false and the caller picks its own
// status (the storage failures, ErrLogLost, ErrCompactRange, a Prepare
// error wrapping neither ErrRefused nor ErrPending, nil). A caller that
// made several calls, an earlier one of which committed, must not pass
// a later call's 58 on as the outcome of the whole request.
func Transient(err error) (code uint32, ok bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, ErrOutcomeUnknown), errors.Is(err, ErrPending):
		return wire.ErrTransientNotCommitted.Code, true
	case errors.Is(err, ErrNotLeader), errors.Is(err, ErrProposalDropped), errors.Is(err, ErrProposalLost),
		errors.Is(err, ErrRefused), errors.Is(err, ErrUnknownGroup), errors.Is(err, ErrGroupRemoved),
		errors.Is(err, ErrStopped), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return wire.ErrTransientNotAccepted.Code, true
	}
	return 0, false
}
