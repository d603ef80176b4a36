package metadata

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// Snapshot layout: [magic 8][version u32][op u64][users][streams]
// [client table][revoked tokens][extension bytes32][xxh3-64 of
// everything before u64].
// Map contents are written in ascending key order, so equal states encode
// to equal bytes.
const (
	snapshotMagic = "IGGOMETA"
	// snapshotVersion 2 adds a topic's consumer_offset_durability flag
	// after preallocate_segments; version 1 snapshots still load (the flag
	// is false there: the key did not exist).
	// Version 3 adds every partition's PurgedAt after its created_at
	// (0 in older versions: no purge identity was kept).
	// Version 4 adds the revoked HTTP tokens after the client table
	// (revoked.go; none in older versions).
	// Version 5 adds a topic's replication_factor after
	// consumer_offset_durability and every partition's replica list
	// and the target of a move in progress (each u8 count, ids) after its
	// PurgedAt (none in older versions).
	// Version 6 adds a topic's local_retention_size and
	// local_retention_age (u64 each) after replication_factor (0 in
	// older versions: the server's tiered_storage settings); an older
	// topic's derived block gets the catalog keys it lacks.
	snapshotVersion = 6
	// snapshotMinLen is an empty snapshot of version 1 to 3.
	snapshotMinLen = 8 + 4 + 8 + 4 + 4 + 4 + 4 + 8
)

// snapshot is a decoded snapshot: the state as of op and the client
// table's persistent records.
type snapshot struct {
	op      uint64
	state   *state
	clients []session.ClientRecord
	// ext is reserved for state machines added later (consumer-group
	// membership); empty in version 1.
	ext []byte
}

// encodeSnapshot encodes s.
func encodeSnapshot(sn *snapshot) []byte {
	le := binary.LittleEndian
	b := append([]byte(nil), snapshotMagic...)
	b = le.AppendUint32(b, snapshotVersion)
	b = le.AppendUint64(b, sn.op)
	st := sn.state
	b = le.AppendUint32(b, uint32(len(st.users)))
	for _, id := range sortedKeys(st.users) {
		b = appendUser(b, st.users[id])
	}
	b = le.AppendUint32(b, uint32(len(st.streams)))
	for _, id := range sortedKeys(st.streams) {
		b = appendStream(b, st.streams[id])
	}
	recs := append([]session.ClientRecord(nil), sn.clients...)
	sort.Slice(recs, func(i, j int) bool { return recs[i].Slot < recs[j].Slot })
	b = le.AppendUint32(b, uint32(len(recs)))
	for i := range recs {
		b = appendClient(b, &recs[i])
	}
	b = appendRevoked(b, &st.revoked)
	ext := sn.ext
	if len(ext) == 0 {
		ext = st.roster // the extension section carries the cluster roster
	}
	b = appendBytes32(b, ext)
	return le.AppendUint64(b, xxh3.Hash(b))
}

func appendUser(b []byte, u *user) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(u.ID))
	b = le.AppendUint64(b, u.CreatedAt)
	b = append(b, byte(u.Status))
	b = appendStr16(b, u.Username)
	b = appendStr16(b, u.PasswordHash)
	b = appendBool(b, u.Perms != nil)
	if u.Perms != nil {
		b = appendBytes32(b, u.Perms.AppendTo(nil))
	}
	names := make([]string, 0, len(u.PATs))
	for n := range u.PATs {
		names = append(names, n)
	}
	sort.Strings(names)
	b = le.AppendUint32(b, uint32(len(names)))
	for _, n := range names {
		p := u.PATs[n]
		b = appendStr16(b, p.Name)
		b = appendStr16(b, p.Hash)
		b = le.AppendUint64(b, p.ExpiryAt)
	}
	return b
}

func appendStream(b []byte, st *stream) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, st.ID)
	b = le.AppendUint64(b, st.CreatedAt)
	b = appendStr16(b, st.Name)
	b = le.AppendUint32(b, uint32(len(st.Topics)))
	for _, id := range sortedKeys(st.Topics) {
		b = appendTopic(b, st.Topics[id])
	}
	return b
}

func appendTopic(b []byte, t *topic) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, t.ID)
	b = le.AppendUint64(b, t.CreatedAt)
	b = appendStr16(b, t.Name)
	b = le.AppendUint64(b, t.Incarnation)
	s := &t.Opts.Settings
	b = append(b, byte(s.CompressionAlgorithm))
	b = le.AppendUint64(b, s.MessageExpiry)
	b = le.AppendUint64(b, s.MaxTopicSize)
	b = le.AppendUint64(b, s.SegmentSize)
	b = appendBool(b, s.EnforceFsync)
	b = le.AppendUint32(b, s.MessagesRequiredToSave)
	b = le.AppendUint64(b, s.SizeOfMessagesRequiredToSave)
	b = appendBool(b, s.PreallocateSegments)
	b = appendBool(b, s.ConsumerOffsetFsync)
	b = append(b, s.ReplicationFactor)
	b = le.AppendUint64(b, s.LocalRetentionSize)
	b = le.AppendUint64(b, s.LocalRetentionAge)
	b = appendBytes32(b, t.Opts.Explicit.AppendTo(nil))
	b = appendBytes32(b, t.Opts.Derived.AppendTo(nil))
	b = le.AppendUint32(b, uint32(len(t.Partitions)))
	for _, p := range t.Partitions {
		b = le.AppendUint32(b, p.ID)
		b = le.AppendUint64(b, p.CreatedAt)
		b = le.AppendUint64(b, p.PurgedAt)
		b = append(b, uint8(len(p.Replicas)))
		b = append(b, p.Replicas...)
		b = append(b, uint8(len(p.Target)))
		b = append(b, p.Target...)
	}
	b = le.AppendUint32(b, t.NextGroupID)
	b = le.AppendUint32(b, uint32(len(t.Groups)))
	for _, id := range sortedKeys(t.Groups) {
		g := t.Groups[id]
		b = le.AppendUint32(b, g.ID)
		b = appendStr16(b, g.Name)
		b = appendBytes32(b, g.G.AppendTo(nil))
	}
	return b
}

func appendClient(b []byte, r *session.ClientRecord) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(r.Slot))
	b = appendU128(b, r.Client)
	b = le.AppendUint64(b, r.Epoch)
	b = le.AppendUint32(b, r.UserID)
	b = le.AppendUint64(b, r.Watermark)
	b = appendU128(b, r.WatermarkChecksum)
	b = le.AppendUint64(b, r.RegisterOp)
	b = appendBool(b, r.Latest != nil)
	if c := r.Latest; c != nil {
		b = le.AppendUint64(b, c.Request)
		b = appendU128(b, c.Checksum)
		b = le.AppendUint64(b, c.CommitOp)
		b = appendBytes32(b, c.Frame)
	}
	return b
}

// Minimum encoded sizes used to bound counts before allocating.
const (
	minUserLen      = 4 + 8 + 1 + 2 + 2 + 1 + 4
	minPATLen       = 2 + 2 + 8
	minStreamLen    = 4 + 8 + 2 + 4
	minTopicLen     = 4 + 8 + 2 + 8 + 1 + 8*3 + 1 + 4 + 8 + 1 + 4 + 4 + 4 + 4 + 4
	minPartitionLen = 4 + 8
	minGroupLen     = 4 + 2 + 4
	minClientLen    = 4 + 16 + 8 + 4 + 8 + 16 + 8 + 1
)

// decodeSnapshot decodes and checks a snapshot. Any structural problem
// (checksum, bounds, duplicate ids or names, non-dense partitions) is
// ErrCorrupt; it never panics and allocates only in proportion to src.
func decodeSnapshot(src []byte) (*snapshot, error) {
	if len(src) < snapshotMinLen || string(src[:8]) != snapshotMagic {
		return nil, ErrCorrupt
	}
	body := src[:len(src)-8]
	if xxh3.Hash(body) != binary.LittleEndian.Uint64(src[len(src)-8:]) {
		return nil, ErrCorrupt
	}
	d := decoder{b: body[8:]}
	d.version = d.u32()
	if d.version < 1 || d.version > snapshotVersion {
		return nil, ErrCorrupt
	}
	sn := &snapshot{op: d.u64(), state: newState()}
	st := sn.state
	for n := d.count(minUserLen); n > 0 && d.err == nil; n-- {
		u := decodeUser(&d, st)
		if d.err != nil {
			break
		}
		if _, dup := st.users[uint32(u.ID)]; dup {
			d.err = ErrCorrupt
			break
		}
		if _, dup := st.userByName[u.Username]; dup {
			d.err = ErrCorrupt
			break
		}
		st.addUser(u)
	}
	for n := d.count(minStreamLen); n > 0 && d.err == nil; n-- {
		s := decodeStream(&d)
		if d.err != nil {
			break
		}
		if _, dup := st.streams[s.ID]; dup || s.ID >= MaxStreams {
			d.err = ErrCorrupt
			break
		}
		if _, dup := st.streamByName[s.Name]; dup {
			d.err = ErrCorrupt
			break
		}
		st.streams[s.ID] = s
		st.streamByName[s.Name] = s.ID
	}
	for n := d.count(minClientLen); n > 0 && d.err == nil; n-- {
		sn.clients = append(sn.clients, decodeClient(&d))
	}
	if d.version >= 4 {
		st.revoked = decodeRevoked(&d)
	}
	sn.ext = d.bytes32(len(d.b))
	if err := d.finish(); err != nil {
		return nil, err
	}
	st.roster = sn.ext
	return sn, nil
}

// nameStr16 reads a Name-shaped string (1..255 bytes of UTF-8).
func (d *decoder) name16() string {
	s := d.str16()
	if d.err == nil && !validWireName(s) {
		d.err = ErrCorrupt
	}
	return s
}

func decodeUser(d *decoder, st *state) *user {
	u := &user{PATs: map[string]*pat{}}
	u.ID = auth.UserID(d.u32())
	u.CreatedAt = d.u64()
	u.Status = auth.UserStatus(d.u8())
	u.Username = d.name16()
	u.PasswordHash = d.str16()
	if d.bool() {
		raw := d.bytes32(len(d.b))
		if d.err == nil {
			p := new(wire.Permissions)
			if p.Decode(raw) != nil || !bytes.Equal(p.AppendTo(nil), raw) {
				d.err = ErrCorrupt
				return u
			}
			u.Perms = p
			u.Permissions = authPermissions(p)
		}
	}
	if d.err == nil && u.Status != auth.StatusActive && u.Status != auth.StatusInactive {
		d.err = ErrCorrupt
	}
	for n := d.count(minPATLen); n > 0 && d.err == nil; n-- {
		p := &pat{UserID: uint32(u.ID), Name: d.name16(), Hash: d.str16(), ExpiryAt: d.u64()}
		if d.err != nil {
			break
		}
		if _, dup := u.PATs[p.Name]; dup || p.Hash == "" {
			d.err = ErrCorrupt
			break
		}
		if _, dup := st.patByHash[p.Hash]; dup {
			d.err = ErrCorrupt
			break
		}
		u.PATs[p.Name] = p
		st.patByHash[p.Hash] = p
	}
	return u
}

func decodeStream(d *decoder) *stream {
	s := &stream{Topics: map[uint32]*topic{}, TopicByName: map[string]uint32{}}
	s.ID = d.u32()
	s.CreatedAt = d.u64()
	s.Name = d.name16()
	for n := d.count(minTopicLen); n > 0 && d.err == nil; n-- {
		t := decodeTopic(d)
		if d.err != nil {
			break
		}
		if _, dup := s.Topics[t.ID]; dup || t.ID >= MaxTopicsPerStream {
			d.err = ErrCorrupt
			break
		}
		if _, dup := s.TopicByName[t.Name]; dup {
			d.err = ErrCorrupt
			break
		}
		s.Topics[t.ID] = t
		s.TopicByName[t.Name] = t.ID
	}
	return s
}

func decodeOptions(d *decoder) wire.Options {
	raw := d.bytes32(wire.MaxOptionsBlockBytes)
	var o wire.Options
	if d.err == nil && (o.Decode(raw) != nil || !bytes.Equal(o.AppendTo(nil), raw)) {
		d.err = ErrCorrupt
	}
	return o
}

func decodeTopic(d *decoder) *topic {
	t := &topic{Groups: map[uint32]*group{}, GroupByName: map[string]uint32{}}
	t.ID = d.u32()
	t.CreatedAt = d.u64()
	t.Name = d.name16()
	t.Incarnation = d.u64()
	s := &t.Opts.Settings
	s.CompressionAlgorithm = wire.CompressionAlgorithm(d.u8())
	s.MessageExpiry = d.u64()
	s.MaxTopicSize = d.u64()
	s.SegmentSize = d.u64()
	s.EnforceFsync = d.bool()
	s.MessagesRequiredToSave = d.u32()
	s.SizeOfMessagesRequiredToSave = d.u64()
	s.PreallocateSegments = d.bool()
	if d.version >= 2 {
		s.ConsumerOffsetFsync = d.bool()
	}
	if d.version >= 5 {
		s.ReplicationFactor = d.u8()
	}
	if d.version >= 6 {
		s.LocalRetentionSize = d.u64()
		s.LocalRetentionAge = d.u64()
	}
	t.Opts.Explicit = decodeOptions(d)
	t.Opts.Derived = decodeOptions(d)
	if d.version < 6 && d.err == nil {
		// Keys added to the catalog since: report them as derived, as a
		// replay of the topic's CREATE_TOPIC would.
		t.Opts.CompleteDerived()
	}
	n := d.count(minPartitionLen)
	if d.err == nil && n > 0 {
		t.Partitions = make([]partition, n)
		for i := range t.Partitions {
			t.Partitions[i] = partition{ID: d.u32(), CreatedAt: d.u64()}
			if d.version >= 3 {
				t.Partitions[i].PurgedAt = d.u64()
			}
			if d.version >= 5 {
				p := &t.Partitions[i]
				if n := int(d.u8()); n > 0 {
					p.Replicas = slices.Clone(d.take(n))
				}
				if n := int(d.u8()); n > 0 {
					p.Target = slices.Clone(d.take(n))
				}
				if hasDuplicate(p.Replicas) || hasDuplicate(p.Target) {
					d.err = ErrCorrupt
				}
			}
			if d.err == nil && t.Partitions[i].ID != uint32(i) {
				d.err = ErrCorrupt
			}
		}
	}
	t.NextGroupID = d.u32()
	for n := d.count(minGroupLen); n > 0 && d.err == nil; n-- {
		id, gname := d.u32(), d.name16()
		raw := d.bytes32(len(d.b))
		if d.err != nil {
			break
		}
		g := newGroup(id, gname, t)
		if g.G.Decode(raw) != nil || !bytes.Equal(g.G.AppendTo(nil), raw) ||
			!slices.Equal(g.G.Partitions(), groupPartitions(t.partitionIDs())) {
			d.err = ErrCorrupt
			break
		}
		if _, dup := t.Groups[g.ID]; dup || g.ID >= t.NextGroupID {
			d.err = ErrCorrupt
			break
		}
		if _, dup := t.GroupByName[g.Name]; dup {
			d.err = ErrCorrupt
			break
		}
		t.Groups[g.ID] = g
		t.GroupByName[g.Name] = g.ID
	}
	return t
}

func decodeClient(d *decoder) session.ClientRecord {
	r := session.ClientRecord{
		Slot: int(d.u32()), Client: d.u128(), Epoch: d.u64(), UserID: d.u32(), Watermark: d.u64(),
		WatermarkChecksum: d.u128(), RegisterOp: d.u64(),
	}
	if d.bool() {
		c := &session.CachedReply{Request: d.u64(), Checksum: d.u128(), CommitOp: d.u64(), Frame: d.bytes32(wire.MaxFrameSize)}
		if d.err == nil && len(c.Frame) < wire.HeaderSize {
			d.err = ErrCorrupt
		}
		r.Latest = c
	}
	return r
}

// validWireName is the Name rule: 1..255 bytes of UTF-8.
func validWireName(s string) bool {
	if len(s) < 1 || len(s) > wire.MaxNameLen {
		return false
	}
	var id wire.Identifier = wire.NamedID(s)
	return id.Validate() == nil
}
