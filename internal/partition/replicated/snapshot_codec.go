package replicated

import (
	"encoding/binary"
	"fmt"

	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// Partition snapshot layout, version 4 (little endian):
//
//	u8   version (4)
//	u64  next offset
//	u64  last timestamp
//	u64  purge identity (the last purge applied to the partition, 0: none)
//	u32  offset count, then per offset:
//	     u8 consumer kind, u32 consumer id, u64 offset
//	u32  client count, then per client, least recently committed first:
//	     u128 client id (lo, hi), u64 watermark, u8 n (at most 128),
//	     n × (u64 request number, u64 body hash), oldest first
//	u32  tier state length, then the remote tier's state (its manifest,
//	     internal/tier; length 0 without a remote tier)
//
// Version 3 is the same without the tier state; it still decodes, with
// none. Version 2 is the same without the purge identity and without the
// window (it ends after the offsets); it still decodes, with purge 0 and
// an empty window. A snapshot carries the window of at most
// snapshotWindowClients clients, the most recently committed ones (the
// default bound of a partition's window, session.
// DefaultPartitionWindowClients, so a window at its default bound travels
// whole); a replica restored from it keeps at most its own bound of them,
// again the most recent.
const (
	snapshotVersion  = 4
	snapshotVersion3 = 3
	snapshotVersion2 = 2
	// maxSnapshotTier bounds the remote tier's state in a snapshot.
	maxSnapshotTier   = 256 << 20
	snapshotHeadLen   = 29 // version, next, ts, purge, offset count
	snapshotHead2Len  = 21 // version 2: no purge identity
	snapshotOffsetLen = 13
	snapshotClientLen = 25 // client id, watermark, n
	snapshotIDLen     = 16 // request number, body hash

	// snapshotWindowClients bounds the clients whose window a snapshot
	// carries (the most recently committed ones).
	snapshotWindowClients = session.DefaultPartitionWindowClients
)

// partSnapshot is a decoded partition snapshot.
type partSnapshot struct {
	next, ts uint64
	// purge is the identity of the last purge applied to the partition
	// (0: none). It is carried through as it is.
	purge   uint64
	offsets []storage.OffsetEntry
	// window is the duplicate window, least recently committed client
	// first (session.PartitionWindow.Export); decoded, it is nil for a
	// version 2 snapshot (no window) and non-nil for versions 3 and 4.
	window []session.ClientWindow
	// tier is the remote tier's state (nil: none).
	tier []byte
}

// encode returns the version 4 form of s. Past snapshotWindowClients the
// least recently committed clients are left out, and of a client's
// requests only the newest session.PartitionWindowSize.
func (s partSnapshot) encode() []byte {
	win := s.window
	if len(win) > snapshotWindowClients {
		win = win[len(win)-snapshotWindowClients:]
	}
	size := snapshotHeadLen + len(s.offsets)*snapshotOffsetLen + 4
	for _, c := range win {
		size += snapshotClientLen + min(len(c.Committed), session.PartitionWindowSize)*snapshotIDLen
	}
	b := make([]byte, 1, size)
	b[0] = snapshotVersion
	b = binary.LittleEndian.AppendUint64(b, s.next)
	b = binary.LittleEndian.AppendUint64(b, s.ts)
	b = binary.LittleEndian.AppendUint64(b, s.purge)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.offsets)))
	for _, o := range s.offsets {
		b = append(b, uint8(o.Kind))
		b = binary.LittleEndian.AppendUint32(b, o.ID)
		b = binary.LittleEndian.AppendUint64(b, o.Offset)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(win)))
	for _, c := range win {
		ids := c.Committed
		if len(ids) > session.PartitionWindowSize {
			ids = ids[len(ids)-session.PartitionWindowSize:]
		}
		b = binary.LittleEndian.AppendUint64(b, c.Client.Lo)
		b = binary.LittleEndian.AppendUint64(b, c.Client.Hi)
		b = binary.LittleEndian.AppendUint64(b, c.Watermark)
		b = append(b, uint8(len(ids)))
		for _, id := range ids {
			b = binary.LittleEndian.AppendUint64(b, id.Request)
			b = binary.LittleEndian.AppendUint64(b, id.BodyHash)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.tier)))
	return append(b, s.tier...)
}

// decodeSnapshot decodes a version 3 or version 2 snapshot. Every count
// is checked against the bytes that remain; trailing bytes, an unknown
// consumer kind, a client with more than session.PartitionWindowSize
// requests and a client listed twice are errors.
func decodeSnapshot(b []byte) (partSnapshot, error) {
	if len(b) == 0 {
		return partSnapshot{}, fmt.Errorf("partition snapshot: empty")
	}
	var s partSnapshot
	var rest []byte
	switch b[0] {
	case snapshotVersion, snapshotVersion3:
		if len(b) < snapshotHeadLen {
			return partSnapshot{}, fmt.Errorf("partition snapshot: version %d in %d bytes", b[0], len(b))
		}
		s.next, s.ts, s.purge = binary.LittleEndian.Uint64(b[1:]), binary.LittleEndian.Uint64(b[9:]), binary.LittleEndian.Uint64(b[17:])
		rest = b[25:]
	case snapshotVersion2:
		if len(b) < snapshotHead2Len {
			return partSnapshot{}, fmt.Errorf("partition snapshot: version 2 in %d bytes", len(b))
		}
		s.next, s.ts = binary.LittleEndian.Uint64(b[1:]), binary.LittleEndian.Uint64(b[9:])
		rest = b[17:]
	default:
		return partSnapshot{}, fmt.Errorf("partition snapshot: version %d (this build reads 2 to 4)", b[0])
	}
	rest, err := decodeSnapshotOffsets(&s, rest)
	if err != nil {
		return partSnapshot{}, err
	}
	if b[0] == snapshotVersion2 {
		if len(rest) != 0 {
			return partSnapshot{}, fmt.Errorf("partition snapshot: %d bytes after the offsets of a version 2 snapshot", len(rest))
		}
		return s, nil
	}
	if rest, err = decodeSnapshotWindow(&s, rest); err != nil {
		return partSnapshot{}, err
	}
	if b[0] == snapshotVersion {
		if len(rest) < 4 {
			return partSnapshot{}, fmt.Errorf("partition snapshot: %d bytes for the tier state length", len(rest))
		}
		n := uint64(binary.LittleEndian.Uint32(rest))
		rest = rest[4:]
		if n > maxSnapshotTier || n != uint64(len(rest)) {
			return partSnapshot{}, fmt.Errorf("partition snapshot: tier state of %d bytes in %d", n, len(rest))
		}
		if n > 0 {
			s.tier = rest
		}
		rest = nil
	}
	if len(rest) != 0 {
		return partSnapshot{}, fmt.Errorf("partition snapshot: %d bytes after the window", len(rest))
	}
	return s, nil
}

// decodeSnapshotOffsets decodes the offset count and the offsets at the
// start of b into s and returns what follows them.
func decodeSnapshotOffsets(s *partSnapshot, b []byte) ([]byte, error) {
	n := uint64(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > uint64(len(b))/snapshotOffsetLen {
		return nil, fmt.Errorf("partition snapshot: %d offsets in %d bytes", n, len(b))
	}
	s.offsets = make([]storage.OffsetEntry, n)
	for i := range s.offsets {
		o := b[i*snapshotOffsetLen:]
		kind := storage.ConsumerKind(o[0])
		if kind != storage.KindConsumer && kind != storage.KindGroup {
			return nil, fmt.Errorf("partition snapshot: consumer kind %d", o[0])
		}
		s.offsets[i] = storage.OffsetEntry{Kind: kind, ID: binary.LittleEndian.Uint32(o[1:]), Offset: binary.LittleEndian.Uint64(o[5:])}
	}
	return b[n*snapshotOffsetLen:], nil
}

// decodeSnapshotWindow decodes the client count and the clients' windows
// at the start of b into s and returns what follows them.
func decodeSnapshotWindow(s *partSnapshot, b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("partition snapshot: %d bytes for the client count", len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > uint64(len(b))/snapshotClientLen {
		return nil, fmt.Errorf("partition snapshot: %d clients in %d bytes", n, len(b))
	}
	s.window = make([]session.ClientWindow, n)
	seen := make(map[wire.Uint128]struct{}, n)
	for i := range s.window {
		if len(b) < snapshotClientLen {
			return nil, fmt.Errorf("partition snapshot: client %d of %d in %d bytes", i, n, len(b))
		}
		c := session.ClientWindow{
			Client:    wire.Uint128{Lo: binary.LittleEndian.Uint64(b), Hi: binary.LittleEndian.Uint64(b[8:])},
			Watermark: binary.LittleEndian.Uint64(b[16:]),
		}
		k := int(b[24])
		b = b[snapshotClientLen:]
		if k > session.PartitionWindowSize {
			return nil, fmt.Errorf("partition snapshot: client %d has %d requests (at most %d)", i, k, session.PartitionWindowSize)
		}
		if k*snapshotIDLen > len(b) {
			return nil, fmt.Errorf("partition snapshot: client %d: %d requests in %d bytes", i, k, len(b))
		}
		if _, dup := seen[c.Client]; dup {
			return nil, fmt.Errorf("partition snapshot: client %d listed twice", i)
		}
		seen[c.Client] = struct{}{}
		c.Committed = make([]session.CommittedRequest, k)
		for j := range c.Committed {
			c.Committed[j] = session.CommittedRequest{Request: binary.LittleEndian.Uint64(b), BodyHash: binary.LittleEndian.Uint64(b[8:])}
			b = b[snapshotIDLen:]
		}
		s.window[i] = c
	}
	return b, nil
}
