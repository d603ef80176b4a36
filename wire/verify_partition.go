package wire

import "strings"

// VERIFY_PARTITION: an Iggo extension command (see cluster_admin.go for
// the extension range) that re-verifies the stored records of one or every
// partition of a topic on the node that receives it and reports the
// damaged ranges found (`iggo partition verify`).

// CmdVerifyPartition re-verifies every record of a topic's partitions as
// stored on the answering node (VerifyPartition body, VerifyPartitionReply
// reply; manage_topic on the topic). Partitions the node does not hold
// are listed with VerifyNotHeld.
const CmdVerifyPartition Command = 1006

// Limits of a VerifyPartitionReply.
const (
	// MaxVerifyRanges bounds the damaged ranges listed for one
	// partition; a reply names at most that many (the rest is counted
	// by nothing: the server logs every range).
	MaxVerifyRanges = 4096
	// MaxVerifyText bounds a file name, reason or error text.
	MaxVerifyText = 4096
)

// VerifyPartition is the body of VERIFY_PARTITION: [stream_id
// Identifier][topic_id Identifier][partition OptPartition]. An absent
// partition verifies every partition of the topic.
type VerifyPartition struct {
	StreamID  Identifier
	TopicID   Identifier
	Partition OptPartition
}

// AppendTo appends the body.
func (v *VerifyPartition) AppendTo(dst []byte) []byte {
	dst = v.StreamID.AppendTo(dst)
	dst = v.TopicID.AppendTo(dst)
	return v.Partition.AppendTo(dst)
}

// Decode decodes the fields and ignores trailing bytes, as every request
// body.
func (v *VerifyPartition) Decode(src []byte) error {
	r := newReader(src)
	v.StreamID = r.identifier()
	v.TopicID = r.identifier()
	v.Partition = r.optPartition()
	return r.done()
}

// VerifyStatus says what became of one partition of a verification.
type VerifyStatus uint8

// Verification statuses.
const (
	// VerifyChecked: the partition's records were read and verified;
	// Damaged lists what is quarantined.
	VerifyChecked VerifyStatus = 0
	// VerifyNotHeld: the answering node holds no replica of the
	// partition (cluster mode); ask a node that does.
	VerifyNotHeld VerifyStatus = 1
	// VerifyStopped: the partition is stopped on this node (its data
	// could not be opened); Error says why.
	VerifyStopped VerifyStatus = 2
	// VerifyFailed: the verification itself failed (an I/O error, the
	// partition closed meanwhile); Error says why. What was checked
	// before is counted.
	VerifyFailed VerifyStatus = 3
)

// String names the status.
func (s VerifyStatus) String() string {
	switch s {
	case VerifyChecked:
		return "checked"
	case VerifyNotHeld:
		return "not held"
	case VerifyStopped:
		return "stopped"
	case VerifyFailed:
		return "failed"
	}
	return "unknown"
}

// DamagedRange is one quarantined range of a partition: [first u64][last
// u64][pos u64][len u64][file str32][reason str32]. File is the segment
// log relative to the server's data directory (system.path), Pos and Len
// the byte range within it, First..Last the offsets (inclusive).
type DamagedRange struct {
	First, Last uint64
	Pos, Len    uint64
	File        string
	Reason      string
}

// PartitionVerify is one partition of a VerifyPartitionReply:
// [partition_id u32][status u8][segments u32][records u64][bytes u64]
// [error str32][damaged_count u32][DamagedRange × count].
type PartitionVerify struct {
	PartitionID uint32
	Status      VerifyStatus
	// Segments, Records and Bytes are what was read and verified.
	Segments uint32
	Records  uint64
	Bytes    uint64
	// Error explains VerifyStopped and VerifyFailed; empty otherwise.
	Error string
	// Damaged is everything quarantined after the verification, oldest
	// first.
	Damaged []DamagedRange
}

// VerifyPartitionReply is the reply of VERIFY_PARTITION: [count u32]
// [PartitionVerify × count], partitions in ascending id order.
type VerifyPartitionReply struct {
	Partitions []PartitionVerify
}

// Minimum encoded sizes, used to bound counts by the bytes left.
const (
	minPartitionVerifySize = 4 + 1 + 4 + 8 + 8 + 4 + 4
	minDamagedRangeSize    = 4*8 + 4 + 4
)

// AppendTo appends the payload. Texts longer than MaxVerifyText are cut
// and at most MaxVerifyRanges ranges are written per partition, so the
// output always decodes.
func (v *VerifyPartitionReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(v.Partitions)))
	for i := range v.Partitions {
		p := &v.Partitions[i]
		dst = appendU32(dst, p.PartitionID)
		dst = append(dst, byte(p.Status))
		dst = appendU32(dst, p.Segments)
		dst = appendU64(dst, p.Records)
		dst = appendU64(dst, p.Bytes)
		dst = appendStr32(dst, cutText(p.Error))
		ranges := p.Damaged[:min(len(p.Damaged), MaxVerifyRanges)]
		dst = appendU32(dst, uint32(len(ranges)))
		for j := range ranges {
			d := &ranges[j]
			dst = appendU64(dst, d.First)
			dst = appendU64(dst, d.Last)
			dst = appendU64(dst, d.Pos)
			dst = appendU64(dst, d.Len)
			dst = appendStr32(dst, cutText(d.File))
			dst = appendStr32(dst, cutText(d.Reason))
		}
	}
	return dst
}

// cutText makes s valid UTF-8 and cuts it to MaxVerifyText bytes at a
// rune boundary.
func cutText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxVerifyText {
		return s
	}
	n := MaxVerifyText
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// Decode decodes the payload, rejecting trailing bytes, an unknown
// status, more ranges than MaxVerifyRanges and counts the bytes left
// cannot hold.
func (v *VerifyPartitionReply) Decode(src []byte) error {
	r := newReader(src)
	*v = VerifyPartitionReply{}
	n := r.u32()
	if r.err == nil && uint64(n)*minPartitionVerifySize > uint64(r.remaining()) {
		return ErrInvalidCommand
	}
	if n > 0 {
		v.Partitions = make([]PartitionVerify, n)
	}
	for i := range v.Partitions {
		if err := v.Partitions[i].read(&r); err != nil {
			return err
		}
	}
	return r.finish()
}

func (p *PartitionVerify) read(r *reader) error {
	p.PartitionID = r.u32()
	p.Status = VerifyStatus(r.u8())
	p.Segments = r.u32()
	p.Records = r.u64()
	p.Bytes = r.u64()
	p.Error = r.str32(MaxVerifyText)
	n := r.u32()
	if r.err != nil {
		return r.err
	}
	if p.Status > VerifyFailed || n > MaxVerifyRanges || uint64(n)*minDamagedRangeSize > uint64(r.remaining()) {
		return ErrInvalidCommand
	}
	if n > 0 {
		p.Damaged = make([]DamagedRange, n)
	}
	for j := range p.Damaged {
		d := &p.Damaged[j]
		d.First, d.Last, d.Pos, d.Len = r.u64(), r.u64(), r.u64(), r.u64()
		d.File = r.str32(MaxVerifyText)
		d.Reason = r.str32(MaxVerifyText)
	}
	return r.err
}
