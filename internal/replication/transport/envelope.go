package transport

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// NodeID is a replica id from the cluster roster.
type NodeID uint64

// Kind says what an Envelope carries.
type Kind uint8

// Envelope kinds.
const (
	// KindRaft carries a raft message of Group.
	KindRaft Kind = 1
	// KindQuiesce is a leader asking a follower to stop ticking Group; Msg
	// holds the leader's term (Term), commit index (Commit) and From.
	KindQuiesce Kind = 2
	// KindPing is host liveness (Group and Msg unused); any frame from a
	// peer proves it alive, pings keep idle pairs talking.
	KindPing Kind = 3
)

// Envelope is one item of a batch: a raft message and the group it
// belongs to.
type Envelope struct {
	Group uint64
	Kind  Kind
	Msg   *raftpb.Message
}

// maxBatchEnvelopes bounds the envelope count a decoder accepts in one
// frame.
const maxBatchEnvelopes = 1 << 20

var errBadBatch = errors.New("malformed batch")

// appendEnvelope encodes e after dst.
func appendEnvelope(dst []byte, e Envelope) ([]byte, error) {
	dst = binary.AppendUvarint(dst, e.Group)
	dst = append(dst, byte(e.Kind))
	if e.Msg == nil {
		return binary.AppendUvarint(dst, 0), nil
	}
	b, err := proto.Marshal(e.Msg)
	if err != nil {
		return dst, fmt.Errorf("marshal raft message: %w", err)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...), nil
}

// decodeBatch decodes a batch payload: uvarint count, then envelopes.
func decodeBatch(p []byte) ([]Envelope, error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > maxBatchEnvelopes || n > uint64(len(p)) {
		return nil, errBadBatch
	}
	p = p[k:]
	out := make([]Envelope, 0, n)
	for range n {
		g, k := binary.Uvarint(p)
		if k <= 0 || len(p) < k+1 {
			return nil, errBadBatch
		}
		kind := Kind(p[k])
		p = p[k+1:]
		if kind < KindRaft || kind > KindPing {
			return nil, fmt.Errorf("%w: unknown kind %d", errBadBatch, kind)
		}
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, errBadBatch
		}
		body := p[k : k+int(l)]
		p = p[k+int(l):]
		e := Envelope{Group: g, Kind: kind}
		if kind != KindPing {
			e.Msg = &raftpb.Message{}
			if err := proto.Unmarshal(body, e.Msg); err != nil {
				return nil, fmt.Errorf("%w: %w", errBadBatch, err)
			}
		}
		out = append(out, e)
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errBadBatch, len(p))
	}
	return out, nil
}
