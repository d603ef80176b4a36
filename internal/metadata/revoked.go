package metadata

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// Revoked HTTP tokens (KindRevokeToken). An HTTP logout revokes its
// token's jti through the metadata log, so in cluster mode every node
// learns it in commit order, and on a single node the journal keeps it.
// The list is part of the state and of the snapshot (version 4), so it
// survives restarts and reaches a follower restored from a raft snapshot.
//
// Each revocation is kept until its own "until" (the token's exp plus the
// verifier's clock skew, chosen by the HTTP API): past it the token no
// longer verifies anyway. Entries past their until are dropped when a
// KindRevokeToken entry applies, measured on that entry's Timestamp (never
// the applying node's clock), and the list holds at most
// auth.MaxRevokedTokens: when full, the entry that expires soonest is
// dropped (ties: the smallest jti), so every replica holds the same list.

// maxJTILen bounds a revoked jti (the HTTP API's are 36-byte UUIDv7s).
const maxJTILen = 255

// revokeTokenFixedLen is the until field of a KindRevokeToken body.
const revokeTokenFixedLen = 8

// minRevokedLen is the smallest encoded snapshot element (empty jti
// length, until).
const minRevokedLen = 2 + 8

// appendRevokeToken encodes a KindRevokeToken body: until (unix seconds,
// u64), then the jti's bytes.
func appendRevokeToken(dst []byte, jti string, until int64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(until))
	return append(dst, jti...)
}

// decodeRevokeToken decodes a KindRevokeToken body; false when it is
// malformed (no jti, or one longer than maxJTILen).
func decodeRevokeToken(b []byte) (jti string, until int64, ok bool) {
	if len(b) <= revokeTokenFixedLen || len(b)-revokeTokenFixedLen > maxJTILen {
		return "", 0, false
	}
	return string(b[revokeTokenFixedLen:]), int64(binary.LittleEndian.Uint64(b)), true
}

// revokedToken is one revoked jti and the unix second it is kept until.
type revokedToken struct {
	jti   string
	until int64
}

// tokenHeap is a min-heap of revoked tokens on (until, jti).
type tokenHeap []revokedToken

func (h tokenHeap) Len() int { return len(h) }
func (h tokenHeap) Less(i, j int) bool {
	if h[i].until != h[j].until {
		return h[i].until < h[j].until
	}
	return h[i].jti < h[j].jti
}
func (h tokenHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *tokenHeap) Push(x any)   { *h = append(*h, x.(revokedToken)) }
func (h *tokenHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// revokedTokens is the replicated list of revoked jtis: a map for the
// per-request check, and a heap whose top is both the next entry to
// expire and the eviction victim.
type revokedTokens struct {
	byJTI map[string]int64
	heap  tokenHeap
}

func newRevokedTokens() revokedTokens {
	return revokedTokens{byJTI: map[string]int64{}}
}

// has reports whether jti is revoked.
func (r *revokedTokens) has(jti string) bool {
	_, ok := r.byJTI[jti]
	return ok
}

// add revokes jti until until: entries expired at now go first, then,
// while the list holds max entries, the one that expires soonest. A jti
// already revoked is left as it is.
func (r *revokedTokens) add(jti string, until, now int64, max int) {
	for len(r.heap) > 0 && r.heap[0].until < now {
		delete(r.byJTI, heap.Pop(&r.heap).(revokedToken).jti)
	}
	if _, ok := r.byJTI[jti]; ok {
		return
	}
	for len(r.heap) >= max && len(r.heap) > 0 {
		delete(r.byJTI, heap.Pop(&r.heap).(revokedToken).jti)
	}
	r.byJTI[jti] = until
	heap.Push(&r.heap, revokedToken{jti: jti, until: until})
}

// applyRevokeToken applies a KindRevokeToken entry at its own time (a
// malformed body changes nothing).
func (s *state) applyRevokeToken(e *Entry) {
	jti, until, ok := decodeRevokeToken(e.Body)
	if !ok {
		return
	}
	s.revoked.add(jti, until, int64(e.Timestamp/1e6), auth.MaxRevokedTokens)
}

// appendRevoked encodes the list for a snapshot: the count, then (jti
// str16, until u64) in ascending jti order.
func appendRevoked(b []byte, r *revokedTokens) []byte {
	jtis := make([]string, 0, len(r.byJTI))
	for j := range r.byJTI {
		jtis = append(jtis, j)
	}
	sort.Strings(jtis)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(jtis)))
	for _, j := range jtis {
		b = appendStr16(b, j)
		b = binary.LittleEndian.AppendUint64(b, uint64(r.byJTI[j]))
	}
	return b
}

// decodeRevoked reads what appendRevoked wrote. Jtis out of ascending
// order (or repeated), empty or longer than maxJTILen, and more than
// auth.MaxRevokedTokens entries are ErrCorrupt.
func decodeRevoked(d *decoder) revokedTokens {
	r := newRevokedTokens()
	n := d.count(minRevokedLen)
	if d.err == nil && n > auth.MaxRevokedTokens {
		d.err = ErrCorrupt
	}
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		jti, until := d.str16(), int64(d.u64())
		if d.err != nil {
			break
		}
		if jti == "" || len(jti) > maxJTILen || (i > 0 && jti <= prev) {
			d.err = ErrCorrupt
			break
		}
		prev = jti
		r.byJTI[jti] = until
		r.heap = append(r.heap, revokedToken{jti: jti, until: until})
	}
	heap.Init(&r.heap)
	return r
}

// RevokeToken commits the revocation of the HTTP token jti of user, kept
// until the unix second until, and returns once it applied on this node
// (on a cluster follower the entry is forwarded to the metadata leader,
// one hop, like a session Register). On failure it returns the binary
// protocol's result code with the error: 58 when the entry was never
// admitted (no leader, the store closed), 57 when its outcome is unknown.
func (s *Store) RevokeToken(user auth.UserID, jti string, until int64) (uint32, error) {
	if jti == "" || len(jti) > maxJTILen {
		return wire.ErrInvalidFormat.Code, fmt.Errorf("revoke token: jti of %d bytes (1 to %d)", len(jti), maxJTILen)
	}
	_, err := s.submit(Entry{Kind: KindRevokeToken, UserID: uint32(user), Body: appendRevokeToken(nil, jti, until)})
	if err != nil {
		return transientCode(err), fmt.Errorf("revoke token: %w", err)
	}
	return 0, nil
}

// TokenRevoked reports whether the HTTP token jti is revoked (a
// committed KindRevokeToken entry names it). It allocates nothing.
func (s *Store) TokenRevoked(jti string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.revoked.has(jti)
}
