package replicated

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// A partition group's log entry (cluster mode) is a fixed header followed,
// for a send, by the stamped batch record exactly as every replica stores
// it. All integers are little endian:
//
//	0  u8   kind (entrySend, entryOffsetStore, entryOffsetAdvance,
//	        entryOffsetDelete, entryPurge, entryPurged, entryTier)
//	1  u8   version (1)
//	2  u8   flags (flagWindowed: the request enters the duplicate window;
//	        flagStored: in the raft log file only, see seglog.go)
//	3  u8   key tag of a sealed batch (0: plaintext; see keyTag)
//	4  u32  origin: replica id of the node that proposed it
//	8  u64  nonce: the origin's id for its waiting handler
//	16 u128 client id (lo, hi)
//	32 u64  request number
//	40 u64  window hash (the body hash of the duplicate window)
//	48      kind-specific part:
//	        send:    u32 message count, u32 record length (0 until the
//	                 entry is stored), u64 base offset, u64 base
//	                 timestamp, then the batch record (absent when
//	                 flagStored: the record is in the segment files)
//	        offsets: u8 consumer kind, 3 reserved, u32 consumer id,
//	                 u64 offset
//	        purge:   u64 purge identity (catalog.TopicRef.PurgedAt; an
//	                 entry without it, written before identities
//	                 existed, is identity 0)
//	        tier:    the record of a segment the leader uploaded to the
//	                 remote tier (internal/tier, Cluster), opaque here
//
// The base offset and timestamp of a send are written by the leader's
// Prepare hook (stamp.go) in the header and in the batch itself.
const (
	entrySend          = 1
	entryOffsetStore   = 2
	entryOffsetAdvance = 3
	entryOffsetDelete  = 4
	entryPurge         = 5
	// entryPurged stands in for a stored batch that a later purge
	// removed (seglog.go): it has no effect.
	entryPurged = 6
	// entryTier records a segment uploaded to the remote tier.
	entryTier = 7
	// maxTierRecord bounds a tier record.
	maxTierRecord = 4 << 10

	entryVersion = 1
	flagWindowed = 1
	flagStored   = 2

	entryCommonLen = 48
	entrySendLen   = entryCommonLen + 24 // header before the batch record
	entryOffsetLen = entryCommonLen + 16
	entryPurgeLen  = entryCommonLen + 8

	offSendCount  = entryCommonLen
	offSendRecLen = entryCommonLen + 4
	offSendBase   = entryCommonLen + 8
	offSendTs     = entryCommonLen + 16
)

// errBadEntry is a partition log entry that does not decode.
var errBadEntry = errors.New("partition: malformed replicated entry")

// entry is a decoded partition log entry. rec aliases the entry data.
type entry struct {
	kind     uint8
	windowed bool
	// keyTag identifies the key a send's batch was sealed with (0:
	// plaintext).
	keyTag uint8
	origin uint32
	nonce  uint64
	key    commit.Key

	// send
	count    uint32
	base, ts uint64
	rec      []byte
	// stored: the record is in the segment files, not in rec (a raft log
	// header, see seglog.go); recLen is its length.
	stored bool
	recLen uint32

	// offsets
	consumer storage.ConsumerKind
	id       uint32
	offset   uint64

	// purgeID is a purge's identity (0: legacy entry without one).
	purgeID uint64

	// tier is a tier entry's record (aliases the entry data).
	tier []byte
}

// appendCommon writes the common header.
func (e *entry) appendCommon(dst []byte) []byte {
	var flags uint8
	if e.windowed {
		flags = flagWindowed
	}
	dst = append(dst, e.kind, entryVersion, flags, e.keyTag)
	dst = binary.LittleEndian.AppendUint32(dst, e.origin)
	dst = binary.LittleEndian.AppendUint64(dst, e.nonce)
	dst = binary.LittleEndian.AppendUint64(dst, e.key.Client.Lo)
	dst = binary.LittleEndian.AppendUint64(dst, e.key.Client.Hi)
	dst = binary.LittleEndian.AppendUint64(dst, e.key.Request)
	return binary.LittleEndian.AppendUint64(dst, e.key.Hash)
}

// encode returns a fresh slice holding the entry.
func (e *entry) encode() []byte { return e.appendTo(make([]byte, 0, e.size())) }

// size is the encoded length of e.
func (e *entry) size() int {
	switch e.kind {
	case entrySend:
		return entrySendLen + len(e.rec)
	case entryOffsetStore, entryOffsetAdvance, entryOffsetDelete:
		return entryOffsetLen
	case entryPurge:
		return entryPurgeLen
	case entryTier:
		return entryCommonLen + len(e.tier)
	}
	return entryCommonLen
}

// appendTo appends the encoded entry to dst.
func (e *entry) appendTo(dst []byte) []byte {
	switch e.kind {
	case entrySend:
		dst = e.appendCommon(dst)
		dst = binary.LittleEndian.AppendUint32(dst, e.count)
		dst = binary.LittleEndian.AppendUint32(dst, 0)
		dst = binary.LittleEndian.AppendUint64(dst, e.base)
		dst = binary.LittleEndian.AppendUint64(dst, e.ts)
		return append(dst, e.rec...)
	case entryOffsetStore, entryOffsetAdvance, entryOffsetDelete:
		dst = e.appendCommon(dst)
		dst = append(dst, uint8(e.consumer), 0, 0, 0)
		dst = binary.LittleEndian.AppendUint32(dst, e.id)
		return binary.LittleEndian.AppendUint64(dst, e.offset)
	case entryPurge:
		return binary.LittleEndian.AppendUint64(e.appendCommon(dst), e.purgeID)
	case entryTier:
		return append(e.appendCommon(dst), e.tier...)
	default:
		return e.appendCommon(dst)
	}
}

// decodeEntry parses b; e.rec aliases b.
func decodeEntry(b []byte) (entry, error) {
	var e entry
	if len(b) < entryCommonLen || b[1] != entryVersion {
		return e, fmt.Errorf("%w: %d bytes", errBadEntry, len(b))
	}
	e.kind = b[0]
	e.windowed = b[2]&flagWindowed != 0
	e.keyTag = b[3]
	e.origin = binary.LittleEndian.Uint32(b[4:])
	e.nonce = binary.LittleEndian.Uint64(b[8:])
	e.key.Client = wire.Uint128{Lo: binary.LittleEndian.Uint64(b[16:]), Hi: binary.LittleEndian.Uint64(b[24:])}
	e.key.Request = binary.LittleEndian.Uint64(b[32:])
	e.key.Hash = binary.LittleEndian.Uint64(b[40:])
	switch e.kind {
	case entrySend:
		e.stored = b[2]&flagStored != 0
		if e.stored && len(b) != entrySendLen || !e.stored && len(b) < entrySendLen+wire.BatchHeaderSize {
			return e, fmt.Errorf("%w: send of %d bytes", errBadEntry, len(b))
		}
		e.count = binary.LittleEndian.Uint32(b[offSendCount:])
		e.recLen = binary.LittleEndian.Uint32(b[offSendRecLen:])
		e.base = binary.LittleEndian.Uint64(b[offSendBase:])
		e.ts = binary.LittleEndian.Uint64(b[offSendTs:])
		if !e.stored {
			e.rec = b[entrySendLen:]
			e.recLen = uint32(len(e.rec))
		}
	case entryOffsetStore, entryOffsetAdvance, entryOffsetDelete:
		if len(b) != entryOffsetLen {
			return e, fmt.Errorf("%w: offset entry of %d bytes", errBadEntry, len(b))
		}
		e.consumer = storage.ConsumerKind(b[entryCommonLen])
		e.id = binary.LittleEndian.Uint32(b[entryCommonLen+4:])
		e.offset = binary.LittleEndian.Uint64(b[entryCommonLen+8:])
	case entryPurge:
		switch len(b) {
		case entryCommonLen:
		case entryPurgeLen:
			e.purgeID = binary.LittleEndian.Uint64(b[entryCommonLen:])
		default:
			return e, fmt.Errorf("%w: purge entry of %d bytes", errBadEntry, len(b))
		}
	case entryPurged:
	case entryTier:
		if len(b) == entryCommonLen || len(b) > entryCommonLen+maxTierRecord {
			return e, fmt.Errorf("%w: tier entry of %d bytes", errBadEntry, len(b))
		}
		e.tier = b[entryCommonLen:]
	default:
		return e, fmt.Errorf("%w: kind %d", errBadEntry, e.kind)
	}
	return e, nil
}

// entryMark is what a log entry means for the stamping tail: a batch
// (ends at base+count), a purge (the tail restarts at 0), or neither.
type entryMark uint8

const (
	markNone entryMark = iota
	markBatch
	markPurge
)

// markOf classifies raw entry data without a full decode.
func markOf(b []byte) (m entryMark, end, ts uint64) {
	if len(b) < entryCommonLen || b[1] != entryVersion {
		return markNone, 0, 0
	}
	switch b[0] {
	case entrySend:
		if len(b) < entrySendLen {
			return markNone, 0, 0
		}
		base := binary.LittleEndian.Uint64(b[offSendBase:])
		return markBatch, base + uint64(binary.LittleEndian.Uint32(b[offSendCount:])), binary.LittleEndian.Uint64(b[offSendTs:])
	case entryPurge:
		return markPurge, 0, 0
	}
	return markNone, 0, 0
}

// entryPurgeID is purgeIDOf of a raft entry's data (0 for any other
// entry, membership changes included).
func entryPurgeID(e *raftpb.Entry) uint64 {
	if e.GetType() != raftpb.EntryNormal {
		return 0
	}
	return purgeIDOf(e.GetData())
}

// purgeIDOf returns the identity of purge entry data (0: none).
func purgeIDOf(b []byte) uint64 {
	if len(b) < entryPurgeLen || b[0] != entryPurge || b[1] != entryVersion {
		return 0
	}
	return binary.LittleEndian.Uint64(b[entryCommonLen:])
}

// windowKeyOf returns the duplicate-window key of a windowed entry.
func windowKeyOf(b []byte) (commit.Key, bool) {
	if len(b) < entryCommonLen || b[1] != entryVersion || b[2]&flagWindowed == 0 {
		return commit.Key{}, false
	}
	return commit.Key{
		Client:  wire.Uint128{Lo: binary.LittleEndian.Uint64(b[16:]), Hi: binary.LittleEndian.Uint64(b[24:])},
		Request: binary.LittleEndian.Uint64(b[32:]),
		Hash:    binary.LittleEndian.Uint64(b[40:]),
	}, true
}

// storedBatch is what a stored header (a send entry kept by segLog in the
// raft log without its batch) says about the batch.
type storedBatch struct {
	base, ts      uint64
	count, recLen uint32
}

// end is the offset after the batch.
func (b storedBatch) end() uint64 { return b.base + uint64(b.count) }

// storedHeader reports whether e is a stored header, and what it says.
func storedHeader(e *raftpb.Entry) (storedBatch, bool) {
	d := e.GetData()
	if e.GetType() != raftpb.EntryNormal || len(d) != entrySendLen || d[0] != entrySend || d[1] != entryVersion || d[2]&flagStored == 0 {
		return storedBatch{}, false
	}
	return storedBatch{
		base:   binary.LittleEndian.Uint64(d[offSendBase:]),
		ts:     binary.LittleEndian.Uint64(d[offSendTs:]),
		count:  binary.LittleEndian.Uint32(d[offSendCount:]),
		recLen: binary.LittleEndian.Uint32(d[offSendRecLen:]),
	}, true
}

// batchHeader reports whether e is a batch, stored (a header) or whole,
// and what its header says.
func batchHeader(e *raftpb.Entry) (storedBatch, bool) {
	if b, ok := storedHeader(e); ok {
		return b, true
	}
	d := e.GetData()
	if e.GetType() != raftpb.EntryNormal || len(d) < entrySendLen || d[0] != entrySend || d[1] != entryVersion {
		return storedBatch{}, false
	}
	return storedBatch{
		base:   binary.LittleEndian.Uint64(d[offSendBase:]),
		ts:     binary.LittleEndian.Uint64(d[offSendTs:]),
		count:  binary.LittleEndian.Uint32(d[offSendCount:]),
		recLen: uint32(len(d) - entrySendLen),
	}, true
}

// isPurge reports whether e is a purge entry.
func isPurge(e *raftpb.Entry) bool {
	d := e.GetData()
	return e.GetType() == raftpb.EntryNormal && len(d) >= entryCommonLen && d[1] == entryVersion && d[0] == entryPurge
}
