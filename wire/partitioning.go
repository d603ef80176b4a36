package wire

// MaxMessageKeyLen is the longest MessagesKey partitioning key
// (encodings.md, "Partitioning"): 1..255 bytes.
const MaxMessageKeyLen = 255

// PartitioningKind is the first byte of a Partitioning.
type PartitioningKind uint8

// Partitioning kinds (encodings.md, "Partitioning").
const (
	// PartitionBalanced lets the server pick the partition round-robin.
	PartitionBalanced PartitioningKind = 1
	// PartitionByID names the partition.
	PartitionByID PartitioningKind = 2
	// PartitionByKey hashes a key to a partition on the server.
	PartitionByKey PartitioningKind = 3
)

// String returns the kind's name.
func (k PartitioningKind) String() string {
	switch k {
	case PartitionBalanced:
		return "Balanced"
	case PartitionByID:
		return "PartitionId"
	case PartitionByKey:
		return "MessagesKey"
	}
	return "PartitioningKind(" + itoa(uint64(k)) + ")"
}

// Partitioning routes a SendMessages batch to a partition:
// [kind u8][len u8][value] (encodings.md, "Partitioning"). Balanced has no
// value (len 0), PartitionID a u32 (len 4), MessagesKey 1..255 key bytes.
type Partitioning struct {
	Kind PartitioningKind
	// PartitionID is the partition when Kind == PartitionByID.
	PartitionID uint32
	// Key is the message key when Kind == PartitionByKey. A decoded key
	// aliases the decoded buffer (no copy).
	Key []byte
}

// BalancedPartitioning returns Balanced partitioning.
func BalancedPartitioning() Partitioning { return Partitioning{Kind: PartitionBalanced} }

// PartitioningByID returns partitioning to a fixed partition.
func PartitioningByID(id uint32) Partitioning {
	return Partitioning{Kind: PartitionByID, PartitionID: id}
}

// PartitioningByKey returns key partitioning; key must be 1..255 bytes.
func PartitioningByKey(key []byte) Partitioning { return Partitioning{Kind: PartitionByKey, Key: key} }

// Validate checks the partitioning can be encoded: a known kind and, for a
// key, 1..MaxMessageKeyLen bytes (ErrInvalidKeyValueLength otherwise).
func (p Partitioning) Validate() error {
	switch p.Kind {
	case PartitionBalanced, PartitionByID:
		return nil
	case PartitionByKey:
		if len(p.Key) == 0 || len(p.Key) > MaxMessageKeyLen {
			return ErrInvalidKeyValueLength
		}
		return nil
	}
	return ErrInvalidCommand
}

// EncodedLen is the partitioning's length on the wire.
func (p Partitioning) EncodedLen() int {
	switch p.Kind {
	case PartitionByID:
		return 6
	case PartitionByKey:
		return 2 + min(len(p.Key), MaxMessageKeyLen)
	}
	return 2
}

// AppendTo appends the partitioning. An unknown kind is written as-is with
// length 0 and a key longer than 255 bytes is truncated; call Validate
// first to refuse them.
func (p Partitioning) AppendTo(dst []byte) []byte {
	switch p.Kind {
	case PartitionByID:
		dst = append(dst, byte(PartitionByID), 4)
		return appendU32(dst, p.PartitionID)
	case PartitionByKey:
		k := p.Key
		if len(k) > MaxMessageKeyLen {
			k = k[:MaxMessageKeyLen]
		}
		dst = append(dst, byte(PartitionByKey), byte(len(k)))
		return append(dst, k...)
	}
	return append(dst, byte(p.Kind), 0)
}

// Decode reads exactly one partitioning from src. Balanced with a value,
// PartitionID with a length other than 4, an empty key or an unknown kind
// is ErrInvalidCommand. The key aliases src.
func (p *Partitioning) Decode(src []byte) error {
	r := newReader(src)
	*p = r.partitioning()
	return r.finish()
}

func (r *reader) partitioning() Partitioning {
	kind := PartitioningKind(r.u8())
	n := int(r.u8())
	if r.err != nil {
		return Partitioning{}
	}
	switch {
	case kind == PartitionBalanced && n == 0:
		return Partitioning{Kind: PartitionBalanced}
	case kind == PartitionByID && n == 4:
		id := r.u32()
		if r.err != nil {
			return Partitioning{}
		}
		return Partitioning{Kind: PartitionByID, PartitionID: id}
	case kind == PartitionByKey && n > 0:
		k := r.take(n)
		if r.err != nil {
			return Partitioning{}
		}
		return Partitioning{Kind: PartitionByKey, Key: k}
	}
	r.fail(ErrInvalidCommand)
	return Partitioning{}
}
