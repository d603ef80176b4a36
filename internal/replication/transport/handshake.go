package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/blake3"
)

// handshakeVersion is the replica protocol version in Hello; a peer with
// another version is refused.
const handshakeVersion = 1

const (
	nonceBytes     = 32
	macBytes       = sha256.Size
	clusterIDBytes = 16
	// helloBytes: version, cluster id, from, to, nonce.
	helloBytes = 1 + clusterIDBytes + 8 + 8 + nonceBytes
	// maxMACs is how many MACs a proof may carry (current and previous
	// secret).
	maxMACs = 2
	// challengeBytes is the largest challenge: hello fields plus a proof.
	challengeBytes = helloBytes + 1 + maxMACs*macBytes
	maxRejectText  = 256
)

// RejectReason says why a handshake was refused; it travels in the Reject
// frame so both sides log the same cause.
type RejectReason uint8

// Reject reasons.
const (
	RejectProtocol     RejectReason = 1
	RejectVersion      RejectReason = 2
	RejectCluster      RejectReason = 3
	RejectAuth         RejectReason = 4
	RejectReplica      RejectReason = 5
	RejectDirection    RejectReason = 6
	RejectUnknownPeer  RejectReason = 7
	RejectShuttingDown RejectReason = 8
)

// String names the reason for log lines.
func (r RejectReason) String() string {
	switch r {
	case RejectProtocol:
		return "protocol error"
	case RejectVersion:
		return "protocol version mismatch"
	case RejectCluster:
		return "cluster name mismatch"
	case RejectAuth:
		return "authentication failed (shared secret mismatch)"
	case RejectReplica:
		return "replica id mismatch"
	case RejectDirection:
		return "wrong dial direction (the lower replica id dials)"
	case RejectUnknownPeer:
		return "replica id not in the roster"
	case RejectShuttingDown:
		return "shutting down"
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// HandshakeError is a refused handshake: Reason, and whether this side
// detected it (Local) or the peer reported it in a Reject frame.
type HandshakeError struct {
	Reason RejectReason
	Local  bool
	Detail string
}

// Error describes the refusal and which side detected it.
func (e *HandshakeError) Error() string {
	who := "peer refused the handshake"
	if e.Local {
		who = "refused the peer's handshake"
	}
	if e.Detail != "" {
		return fmt.Sprintf("%s: %s: %s", who, e.Reason, e.Detail)
	}
	return fmt.Sprintf("%s: %s", who, e.Reason)
}

// ClusterID is the first 16 bytes of BLAKE3(name), as the reference
// derives its cluster id.
func ClusterID(name string) [clusterIDBytes]byte {
	sum := blake3.Sum256([]byte(name))
	var id [clusterIDBytes]byte
	copy(id[:], sum[:clusterIDBytes])
	return id
}

// hello is the dialer's opening (and, with a proof, the acceptor's
// challenge).
type hello struct {
	version   uint8
	clusterID [clusterIDBytes]byte
	from, to  NodeID
	nonce     [nonceBytes]byte
	proof     [][macBytes]byte
}

func (h *hello) append(dst []byte, withProof bool) []byte {
	dst = append(dst, h.version)
	dst = append(dst, h.clusterID[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.from))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.to))
	dst = append(dst, h.nonce[:]...)
	if withProof {
		dst = appendProof(dst, h.proof)
	}
	return dst
}

func decodeHello(p []byte, withProof bool) (hello, error) {
	var h hello
	if len(p) < helloBytes || (!withProof && len(p) != helloBytes) {
		return h, fmt.Errorf("handshake frame of %d bytes", len(p))
	}
	h.version = p[0]
	copy(h.clusterID[:], p[1:])
	h.from = NodeID(binary.LittleEndian.Uint64(p[1+clusterIDBytes:]))
	h.to = NodeID(binary.LittleEndian.Uint64(p[1+clusterIDBytes+8:]))
	copy(h.nonce[:], p[1+clusterIDBytes+16:])
	if withProof {
		proof, err := decodeProof(p[helloBytes:])
		if err != nil {
			return h, err
		}
		h.proof = proof
	}
	return h, nil
}

// A proof is a u8 count and that many MACs: one per secret the signer
// holds (current, then previous). Offering the previous secret's MAC lets
// nodes that have not rotated yet accept this one during a rolling
// rotation; the verifier accepts a proof when any MAC matches any of its
// own secrets.
func appendProof(dst []byte, proof [][macBytes]byte) []byte {
	dst = append(dst, byte(len(proof)))
	for _, m := range proof {
		dst = append(dst, m[:]...)
	}
	return dst
}

func decodeProof(p []byte) ([][macBytes]byte, error) {
	if len(p) < 1 || p[0] < 1 || p[0] > maxMACs || len(p) != 1+int(p[0])*macBytes {
		return nil, fmt.Errorf("handshake proof of %d bytes", len(p))
	}
	out := make([][macBytes]byte, p[0])
	for i := range out {
		copy(out[i][:], p[1+i*macBytes:])
	}
	return out, nil
}

// sign returns the proof over the handshake transcript with every key.
func sign(keys [][]byte, role string, cluster [clusterIDBytes]byte, dialer, acceptor NodeID, nonceD, nonceA [nonceBytes]byte) [][macBytes]byte {
	out := make([][macBytes]byte, 0, len(keys))
	for _, k := range keys {
		out = append(out, handshakeMAC(k, role, cluster, dialer, acceptor, nonceD, nonceA))
	}
	return out
}

// handshakeMAC binds a role label, the cluster, both ids and both nonces
// under key. The role label keeps the two directions distinct, so a MAC
// cannot be reflected back to its sender.
func handshakeMAC(key []byte, role string, cluster [clusterIDBytes]byte, dialer, acceptor NodeID, nonceD, nonceA [nonceBytes]byte) [macBytes]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("iggo-replica " + role))
	m.Write(cluster[:])
	var ids [16]byte
	binary.LittleEndian.PutUint64(ids[:8], uint64(dialer))
	binary.LittleEndian.PutUint64(ids[8:], uint64(acceptor))
	m.Write(ids[:])
	m.Write(nonceD[:])
	m.Write(nonceA[:])
	var out [macBytes]byte
	copy(out[:], m.Sum(nil))
	return out
}

// verifyProof checks every MAC of proof against every accepted key (the
// current secret and the previous one during a rotation).
func verifyProof(keys [][]byte, proof [][macBytes]byte, role string, cluster [clusterIDBytes]byte, dialer, acceptor NodeID, nonceD, nonceA [nonceBytes]byte) bool {
	for _, k := range keys {
		want := handshakeMAC(k, role, cluster, dialer, acceptor, nonceD, nonceA)
		for _, got := range proof {
			if hmac.Equal(want[:], got[:]) {
				return true
			}
		}
	}
	return false
}

func newNonce() ([nonceBytes]byte, error) {
	var n [nonceBytes]byte
	if _, err := io.ReadFull(rand.Reader, n[:]); err != nil {
		return n, fmt.Errorf("handshake nonce: %w", err)
	}
	return n, nil
}

func rejectPayload(r RejectReason, detail string) []byte {
	if len(detail) > maxRejectText {
		detail = detail[:maxRejectText]
	}
	return append([]byte{byte(r)}, detail...)
}

func decodeReject(p []byte) *HandshakeError {
	if len(p) == 0 {
		return &HandshakeError{Reason: RejectProtocol}
	}
	d := p[1:]
	if len(d) > maxRejectText {
		d = d[:maxRejectText]
	}
	return &HandshakeError{Reason: RejectReason(p[0]), Detail: string(d)}
}

func shortID(id [clusterIDBytes]byte) string { return hex.EncodeToString(id[:4]) }

var errUnexpectedFrame = errors.New("unexpected frame during the handshake")
