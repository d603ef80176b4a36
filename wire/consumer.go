package wire

// ConsumerKind is the first byte of a Consumer (encodings.md, "Consumer").
type ConsumerKind uint8

// Consumer kinds.
const (
	// ConsumerSingle is a single consumer whose id the client chooses.
	ConsumerSingle ConsumerKind = 1
	// ConsumerGroupKind is a consumer group, named by the group id or name.
	ConsumerGroupKind ConsumerKind = 2
)

// String returns the kind's name.
func (k ConsumerKind) String() string {
	switch k {
	case ConsumerSingle:
		return "Consumer"
	case ConsumerGroupKind:
		return "ConsumerGroup"
	}
	return "ConsumerKind(" + itoa(uint64(k)) + ")"
}

// Consumer names who polls or owns a stored offset:
// [kind u8][id Identifier] (encodings.md, "Consumer").
type Consumer struct {
	Kind ConsumerKind
	ID   Identifier
}

// SingleConsumer returns a kind-1 consumer with the given identifier.
func SingleConsumer(id Identifier) Consumer { return Consumer{Kind: ConsumerSingle, ID: id} }

// GroupConsumer returns a kind-2 (consumer group) consumer.
func GroupConsumer(id Identifier) Consumer { return Consumer{Kind: ConsumerGroupKind, ID: id} }

// Validate checks the consumer can be encoded: a known kind and a valid
// identifier.
func (c Consumer) Validate() error {
	if c.Kind != ConsumerSingle && c.Kind != ConsumerGroupKind {
		return ErrInvalidCommand
	}
	return c.ID.Validate()
}

// EncodedLen is the consumer's length on the wire.
func (c Consumer) EncodedLen() int { return 1 + c.ID.EncodedLen() }

// AppendTo appends [kind][identifier].
func (c Consumer) AppendTo(dst []byte) []byte {
	dst = append(dst, byte(c.Kind))
	return c.ID.AppendTo(dst)
}

// Decode reads exactly one consumer from src; an unknown kind is a decode
// error (ErrInvalidCommand).
func (c *Consumer) Decode(src []byte) error {
	r := newReader(src)
	*c = r.consumer()
	return r.finish()
}

func (r *reader) consumer() Consumer {
	kind := ConsumerKind(r.u8())
	if r.err == nil && kind != ConsumerSingle && kind != ConsumerGroupKind {
		r.fail(ErrInvalidCommand)
		return Consumer{}
	}
	id := r.identifier()
	if r.err != nil {
		return Consumer{}
	}
	return Consumer{Kind: kind, ID: id}
}

// OptPartitionSize is the fixed wire length of an OptPartition.
const OptPartitionSize = 5

// OptPartition is an optional partition id, always 5 bytes on the wire:
// [flag u8][partition_id u32] (encodings.md, "Optional partition id").
// Absent is written as five zero bytes, as the Go SDK does.
//
// Decoding accepts only flag 0 or 1 (any other flag is a decode error, a
// choice: the spec defines no other value). With flag 0 the value bytes are
// ignored, so an absent partition always decodes to the zero OptPartition.
type OptPartition struct {
	Present bool
	ID      uint32
}

// SomePartition returns a present partition id.
func SomePartition(id uint32) OptPartition { return OptPartition{Present: true, ID: id} }

// AppendTo appends the 5-byte encoding. An absent partition writes zero
// value bytes whatever ID holds.
func (p OptPartition) AppendTo(dst []byte) []byte {
	if !p.Present {
		return append(dst, 0, 0, 0, 0, 0)
	}
	dst = append(dst, 1)
	return appendU32(dst, p.ID)
}

// Decode reads exactly 5 bytes.
func (p *OptPartition) Decode(src []byte) error {
	r := newReader(src)
	*p = r.optPartition()
	return r.finish()
}

func (r *reader) optPartition() OptPartition {
	flag := r.u8()
	id := r.u32()
	if r.err != nil {
		return OptPartition{}
	}
	switch flag {
	case 0:
		return OptPartition{}
	case 1:
		return OptPartition{Present: true, ID: id}
	}
	r.fail(ErrInvalidCommand)
	return OptPartition{}
}
