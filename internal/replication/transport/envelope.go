package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

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
	// KindCall is the request of a call between hosts: Group is the
	// call's correlation id and Data the encoded request.
	KindCall Kind = 4
	// KindReply answers the KindCall of the same correlation id (Group);
	// Data is the encoded reply.
	KindReply Kind = 5
	// KindDirectory carries a host's announcement of the groups it leads
	// (Data; Group unused).
	KindDirectory Kind = 6
)

// maxKind is the highest kind a decoder accepts.
const maxKind = KindDirectory

// CarriesData reports whether envelopes of kind k carry opaque bytes
// (Envelope.Data) rather than a raft message. Such an envelope is
// reported through Handler.Unreachable only when it was certainly never
// written; one lost with its connection is announced by
// ConnHandler.Disconnected instead.
func (k Kind) CarriesData() bool { return k >= KindCall && k <= KindDirectory }

// Envelope is one item of a batch: a raft message and the group it
// belongs to, or (for the kinds that CarriesData) opaque bytes.
type Envelope struct {
	Group uint64
	Kind  Kind
	Msg   *raftpb.Message
	// Data is the body of a kind that CarriesData. A decoded Data (and
	// a decoded raft entry's data) is the receiver's own: a copy, or, from
	// 64 KiB, the frame it arrived in, which the reader does not reuse.
	Data []byte
	// Prefix, when set, is sent right before Data as part of the same
	// body (the receiver gets one Data): a small header put in front of
	// a large payload without copying the payload.
	Prefix []byte
}

// maxBatchEnvelopes bounds the envelope count a decoder accepts in one
// frame.
const maxBatchEnvelopes = 1 << 20

// msgChunk is how many raft messages decodeBatch allocates at once.
const msgChunk = 64

var errBadBatch = errors.New("malformed batch")

// envelopeSize returns the encoded length of e and of its message body.
func envelopeSize(e Envelope) (total, body int) {
	switch {
	case e.Kind.CarriesData():
		body = len(e.Prefix) + len(e.Data)
	case e.Msg != nil:
		body = proto.Size(e.Msg)
	}
	return uvarintLen(e.Group) + 1 + uvarintLen(uint64(body)) + body, body
}

// appendEnvelope encodes e after dst, marshalling the message straight
// into dst (no intermediate buffer); body is its size from envelopeSize,
// measured just before. The marshal reuses the sizes that measurement
// cached in the message tree: raft does not touch a message once it is
// in a Ready, and an entry shared by the MsgApps of several peers caches
// the same sizes whichever writer measures it. On error dst comes back
// unchanged.
func appendEnvelope(dst []byte, e Envelope, body int) ([]byte, error) {
	start := len(dst)
	dst = binary.AppendUvarint(dst, e.Group)
	dst = append(dst, byte(e.Kind))
	dst = binary.AppendUvarint(dst, uint64(body))
	if e.Kind.CarriesData() {
		return append(append(dst, e.Prefix...), e.Data...), nil
	}
	if e.Msg == nil {
		return dst, nil
	}
	at := len(dst)
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(dst, e.Msg)
	if err != nil {
		return dst[:start], fmt.Errorf("marshal raft message: %w", err)
	}
	if len(out)-at != body {
		return dst[:start], fmt.Errorf("marshal raft message: %d bytes, measured %d", len(out)-at, body)
	}
	return out, nil
}

// uvarintLen is the length of v as a uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// decodeBatch decodes a batch payload: uvarint count, then envelopes.
// Every Data is a copy.
func decodeBatch(p []byte) ([]Envelope, error) {
	envs, _, err := decodeBatchAlias(p, math.MaxInt)
	return envs, err
}

// decodeBatchAlias is decodeBatch that leaves a Data of at least
// aliasMin bytes, and the data of a raft entry of that size
// (decodeMsgAlias), in p instead of copying it; aliased says whether it
// did (the reader then does not reuse p's buffer).
func decodeBatchAlias(p []byte, aliasMin int) (out []Envelope, aliased bool, err error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > maxBatchEnvelopes || n > uint64(len(p)) {
		return nil, false, errBadBatch
	}
	p = p[k:]
	out = make([]Envelope, 0, n)
	// Messages are allocated msgChunk at a time rather than one by one;
	// the host steps them and drops them together.
	var msgs []raftpb.Message
	for i := range n {
		g, k := binary.Uvarint(p)
		if k <= 0 || len(p) < k+1 {
			return nil, false, errBadBatch
		}
		kind := Kind(p[k])
		p = p[k+1:]
		if kind < KindRaft || kind > maxKind {
			return nil, false, fmt.Errorf("%w: unknown kind %d", errBadBatch, kind)
		}
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, false, errBadBatch
		}
		body := p[k : k+int(l)]
		p = p[k+int(l):]
		e := Envelope{Group: g, Kind: kind}
		switch {
		case kind.CarriesData() && len(body) >= aliasMin:
			e.Data, aliased = body[:len(body):len(body)], true
		case kind.CarriesData():
			// A copy: the reader reuses its frame buffer.
			e.Data = append([]byte(nil), body...)
		case kind != KindPing:
			if len(msgs) == 0 {
				msgs = make([]raftpb.Message, min(n-i, msgChunk))
			}
			e.Msg, msgs = &msgs[0], msgs[1:]
			// Entry data of at least aliasMin bytes stays in p; the rest
			// is copied, so the reader reuses its frame buffer unless
			// something was left in it.
			a, err := decodeMsgAlias(body, e.Msg, aliasMin)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %w", errBadBatch, err)
			}
			aliased = aliased || a
		}
		out = append(out, e)
	}
	if len(p) != 0 {
		return nil, false, fmt.Errorf("%w: %d trailing bytes", errBadBatch, len(p))
	}
	return out, aliased, nil
}

// putEnvelopeHead appends an envelope's group, kind and body length.
func putEnvelopeHead(buf []byte, group uint64, kind Kind, body int) []byte {
	buf = binary.AppendUvarint(buf, group)
	buf = append(buf, byte(kind))
	return binary.AppendUvarint(buf, uint64(body))
}
