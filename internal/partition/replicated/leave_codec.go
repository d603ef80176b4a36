package replicated

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/replication"
)

// The leave call: a node whose replica of a partition is damaged asks the
// group's leader to take it out of the group's raft configuration before
// it wipes the replica (rebuild.go). The caller is the node to remove
// (the transport names it), so the request names only the group.
//
//	request: u8 version (1) | uvarint group
//	reply:   u8 outcome | uvarint leader+1 (0: unknown) | uvarint index
//
// Outcome leaveDone: the node is no member of the group in the leader's
// configuration (it was removed now, or was not one) as of raft index
// index, applied on the leader: a configuration at or after it that makes
// the node a voter again is one that added it back. leaveNotLeader: the
// callee does not lead the group; leader names the one it knows (index
// is 0).
const leaveVersion = 1

// Outcomes of a leave call.
const (
	leaveDone      = 0
	leaveNotLeader = 1
)

// errBadLeave: a leave request or reply that does not decode.
var errBadLeave = errors.New("partition: malformed leave call")

// leaveReply is the decoded reply of a leave call.
type leaveReply struct {
	outcome   byte
	leader    replication.NodeID
	hasLeader bool
	index     uint64
}

func encodeLeaveRequest(g replication.GroupID) []byte {
	return binary.AppendUvarint([]byte{leaveVersion}, uint64(g))
}

func decodeLeaveRequest(b []byte) (replication.GroupID, error) {
	if len(b) < 1 || b[0] != leaveVersion {
		return 0, fmt.Errorf("%w: version", errBadLeave)
	}
	g, n := binary.Uvarint(b[1:])
	if n <= 0 || 1+n != len(b) || n != uvarintLen(g) {
		return 0, fmt.Errorf("%w: group", errBadLeave)
	}
	return replication.GroupID(g), nil
}

func encodeLeaveReply(r leaveReply) []byte {
	l := uint64(0)
	if r.hasLeader {
		l = uint64(r.leader) + 1
	}
	return binary.AppendUvarint(binary.AppendUvarint([]byte{r.outcome}, l), r.index)
}

func decodeLeaveReply(b []byte) (leaveReply, error) {
	if len(b) < 1 || b[0] > leaveNotLeader {
		return leaveReply{}, fmt.Errorf("%w: outcome", errBadLeave)
	}
	r := leaveReply{outcome: b[0]}
	b = b[1:]
	l, n := binary.Uvarint(b)
	if n <= 0 || n != uvarintLen(l) || l > 1<<8 {
		return leaveReply{}, fmt.Errorf("%w: leader", errBadLeave)
	}
	b = b[n:]
	if l > 0 {
		r.leader, r.hasLeader = replication.NodeID(l-1), true
	}
	r.index, n = binary.Uvarint(b)
	if n <= 0 || n != len(b) || n != uvarintLen(r.index) {
		return leaveReply{}, fmt.Errorf("%w: index", errBadLeave)
	}
	return r, nil
}

// uvarintLen is the length of the shortest uvarint encoding of v; the
// decoders accept no other, so every value has one encoding.
func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}
