package metadata

import (
	"encoding/binary"
	"errors"

	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// Kind is the kind of a committed metadata entry.
type Kind uint8

// Entry kinds.
const (
	// KindBootstrap creates the root user on first start. Body is the
	// username, Secret the password hash.
	KindBootstrap Kind = 1
	// KindRegister is a session Register (the op becomes the epoch).
	KindRegister Kind = 2
	// KindLogout ends the session Session of Client.
	KindLogout Kind = 3
	// KindCommand is a metadata command (Code, Body, Secret).
	KindCommand Kind = 4
	// KindPATCleanup deletes the tokens expired at Timestamp.
	KindPATCleanup Kind = 5
	// KindMarker changes nothing; it records that the effects of every
	// earlier entry have completed (EffectsThrough).
	KindMarker Kind = 6
	// KindDropMembers ends every consumer-group membership: committed at
	// start-up, when no client can still be connected (storage.md §5).
	KindDropMembers Kind = 7
	// KindCompleteRevocations completes pending consumer-group
	// revocations: Body lists (stream, topic, group, partition) (see
	// groups.go). The live side decides (commit or timeout); apply only
	// moves the named partitions.
	KindCompleteRevocations Kind = 8
	// KindRoster replaces the cluster roster (Body: the roster as the
	// broker encodes it); cluster mode only, committed by the node
	// administration commands.
	KindRoster Kind = 9
	// KindRevokeToken revokes an HTTP token (an HTTP logout): Body is
	// the token's jti and the unix second until which it must stay
	// revoked (revoked.go); UserID is the token's user.
	KindRevokeToken Kind = 10
	// KindPlacement replaces one partition's replica list (a replica
	// move, placement.go); Body is placementBody.
	KindPlacement Kind = 11
	kindLimit     Kind = 12
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindBootstrap:
		return "bootstrap"
	case KindRegister:
		return "register"
	case KindLogout:
		return "logout"
	case KindCommand:
		return "command"
	case KindPATCleanup:
		return "pat-cleanup"
	case KindMarker:
		return "marker"
	case KindDropMembers:
		return "drop-members"
	case KindCompleteRevocations:
		return "complete-revocations"
	case KindRoster:
		return "roster"
	case KindRevokeToken:
		return "revoke-token"
	case KindPlacement:
		return "placement"
	}
	return "kind?"
}

// Entry is one committed metadata operation as the journal stores it.
// Everything apply needs is here: it never reads the clock or randomness.
type Entry struct {
	// Op is the log position (1, 2, ...): the session epoch of a Register
	// and the incarnation of a topic created by it.
	Op   uint64
	Kind Kind
	// Timestamp is the server time of the commit in microseconds.
	Timestamp uint64
	// EffectsThrough is the highest op whose partition-plane effects had
	// completed when this entry was written.
	EffectsThrough uint64
	// Client, Session, Request, RequestChecksum and RequestTimestamp come
	// from the request header; they key the client table and rebuild the
	// cached reply frame on replay.
	Client           wire.Uint128
	Session          uint64
	Request          uint64
	RequestChecksum  wire.Uint128
	RequestTimestamp uint64
	// UserID is the acting user (the session's user; the registered user
	// for a Register).
	UserID uint32
	// Code is the command of a KindCommand entry.
	Code wire.Command
	// Body is the request body (password fields removed: see Secret).
	Body []byte
	// Secret is what the server chose for the entry: a password hash, a
	// token hash. Never a raw password or token.
	Secret []byte
	// View, Replica and Cluster are the header fields of the reply frame
	// in cluster mode (the raft term, the proposing leader, the cluster
	// id), set when the entry applies; they are not part of the record.
	View    uint32
	Replica uint8
	Cluster wire.Uint128
}

// Record framing: [length u32][xxh3-64 of payload u64][payload]. The
// payload is the encoded entry.
const (
	recordHeaderLen = 12
	// entryFixedLen is the fixed part of an encoded entry.
	entryFixedLen = 8 + 1 + 8 + 8 + 16 + 8 + 8 + 16 + 8 + 4 + 2 + 4 + 4
	// MaxRecordLen bounds one record's payload: a request body is at most
	// one frame, plus a bounded secret.
	MaxRecordLen = wire.MaxFrameSize + maxSecretLen + entryFixedLen
	// maxSecretLen bounds Entry.Secret: a hash, or the replica lists of
	// new partitions (placement.go).
	maxSecretLen = maxPlacementSecret
)

// Errors of the record and entry decoders.
var (
	// ErrTorn is a record cut short by the end of the data.
	ErrTorn = errors.New("metadata: torn record")
	// ErrCorrupt is a record whose checksum or contents are wrong.
	ErrCorrupt = errors.New("metadata: corrupt record")
)

// AppendRecord appends e as one framed record.
func AppendRecord(dst []byte, e *Entry) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeaderLen)...)
	dst = e.appendPayload(dst)
	payload := dst[start+recordHeaderLen:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(dst[start+4:], xxh3.Hash(payload))
	return dst
}

func (e *Entry) appendPayload(dst []byte) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint64(dst, e.Op)
	dst = append(dst, byte(e.Kind))
	dst = le.AppendUint64(dst, e.Timestamp)
	dst = le.AppendUint64(dst, e.EffectsThrough)
	dst = appendU128(dst, e.Client)
	dst = le.AppendUint64(dst, e.Session)
	dst = le.AppendUint64(dst, e.Request)
	dst = appendU128(dst, e.RequestChecksum)
	dst = le.AppendUint64(dst, e.RequestTimestamp)
	dst = le.AppendUint32(dst, e.UserID)
	dst = le.AppendUint16(dst, uint16(e.Code))
	dst = le.AppendUint32(dst, uint32(len(e.Body)))
	dst = append(dst, e.Body...)
	dst = le.AppendUint32(dst, uint32(len(e.Secret)))
	return append(dst, e.Secret...)
}

func appendU128(dst []byte, v wire.Uint128) []byte {
	var b [16]byte
	wire.PutUint128(b[:], v)
	return append(dst, b[:]...)
}

// DecodeRecord decodes the record at the start of src and returns the
// entry and the record's length. A record that does not fit in src is
// ErrTorn; a bad checksum or an undecodable entry is ErrCorrupt. The
// entry's Body and Secret are copies.
func DecodeRecord(src []byte) (Entry, int, error) {
	if len(src) < recordHeaderLen {
		return Entry{}, 0, ErrTorn
	}
	n := binary.LittleEndian.Uint32(src)
	if n < entryFixedLen || n > MaxRecordLen {
		return Entry{}, 0, ErrCorrupt
	}
	if uint64(len(src)-recordHeaderLen) < uint64(n) {
		return Entry{}, 0, ErrTorn
	}
	payload := src[recordHeaderLen : recordHeaderLen+int(n)]
	if xxh3.Hash(payload) != binary.LittleEndian.Uint64(src[4:]) {
		return Entry{}, 0, ErrCorrupt
	}
	var e Entry
	if err := e.decodePayload(payload); err != nil {
		return Entry{}, 0, err
	}
	return e, recordHeaderLen + int(n), nil
}

func (e *Entry) decodePayload(p []byte) error {
	d := decoder{b: p}
	e.Op = d.u64()
	e.Kind = Kind(d.u8())
	e.Timestamp = d.u64()
	e.EffectsThrough = d.u64()
	e.Client = d.u128()
	e.Session = d.u64()
	e.Request = d.u64()
	e.RequestChecksum = d.u128()
	e.RequestTimestamp = d.u64()
	e.UserID = d.u32()
	e.Code = wire.Command(d.u16())
	e.Body = d.bytes32(wire.MaxFrameSize)
	e.Secret = d.bytes32(maxSecretLen)
	if d.err == nil && (e.Kind == 0 || e.Kind >= kindLimit || e.Op == 0) {
		d.err = ErrCorrupt
	}
	return d.finish()
}

// decoder is a sticky-error little-endian reader for journal records and
// snapshots. Lengths are checked against the bytes left before anything
// is allocated.
type decoder struct {
	b   []byte
	err error
	// version is the snapshot format version being decoded (0 for
	// journal records).
	version uint32
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = ErrCorrupt
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if b := d.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) u128() wire.Uint128 {
	if b := d.take(16); b != nil {
		return wire.GetUint128(b)
	}
	return wire.Uint128{}
}

func (d *decoder) bool() bool {
	switch d.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	if d.err == nil {
		d.err = ErrCorrupt
	}
	return false
}

// bytes32 reads [len u32][bytes] (a copy; nil when empty), len ≤ limit.
func (d *decoder) bytes32(limit int) []byte {
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(limit) {
		d.err = ErrCorrupt
		return nil
	}
	b := d.take(int(n))
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// str16 reads [len u16][bytes] as a string.
func (d *decoder) str16() string {
	return string(d.take(int(d.u16())))
}

// count reads a u32 element count and checks that count elements of at
// least minLen bytes each fit in what is left.
func (d *decoder) count(minLen int) int {
	n := d.u32()
	if d.err == nil && uint64(n)*uint64(max(minLen, 1)) > uint64(len(d.b)) {
		d.err = ErrCorrupt
		return 0
	}
	return int(n)
}

func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = ErrCorrupt
	}
	return d.err
}

func appendStr16(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

func appendBytes32(dst []byte, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}
