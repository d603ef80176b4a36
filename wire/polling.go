package wire

// PollingStrategySize is the fixed wire length of a PollingStrategy.
const PollingStrategySize = 9

// PollingKind is the first byte of a PollingStrategy.
type PollingKind uint8

// Polling kinds (encodings.md, "PollingStrategy").
const (
	// PollOffset starts at the offset in Value.
	PollOffset PollingKind = 1
	// PollTimestamp starts at the first message whose batch was appended at
	// or after Value (µs).
	PollTimestamp PollingKind = 2
	// PollFirst starts at the oldest retained message.
	PollFirst PollingKind = 3
	// PollLast returns the last `count` messages.
	PollLast PollingKind = 4
	// PollNext continues after the consumer's stored offset.
	PollNext PollingKind = 5
)

// String returns the kind's name.
func (k PollingKind) String() string {
	switch k {
	case PollOffset:
		return "Offset"
	case PollTimestamp:
		return "Timestamp"
	case PollFirst:
		return "First"
	case PollLast:
		return "Last"
	case PollNext:
		return "Next"
	}
	return "PollingKind(" + itoa(uint64(k)) + ")"
}

func (k PollingKind) valid() bool { return k >= PollOffset && k <= PollNext }

// PollingStrategy says where a poll starts: [kind u8][value u64], always 9
// bytes (encodings.md, "PollingStrategy"). Value is ignored by the server
// for First, Last and Next, where encoders write 0; a decoder keeps whatever
// value was sent so re-encoding is byte-exact.
type PollingStrategy struct {
	Kind  PollingKind
	Value uint64
}

// OffsetStrategy polls from an offset.
func OffsetStrategy(offset uint64) PollingStrategy {
	return PollingStrategy{Kind: PollOffset, Value: offset}
}

// TimestampStrategy polls from a timestamp in microseconds.
func TimestampStrategy(micros uint64) PollingStrategy {
	return PollingStrategy{Kind: PollTimestamp, Value: micros}
}

// FirstStrategy polls from the oldest retained message.
func FirstStrategy() PollingStrategy { return PollingStrategy{Kind: PollFirst} }

// LastStrategy polls the newest messages.
func LastStrategy() PollingStrategy { return PollingStrategy{Kind: PollLast} }

// NextStrategy polls after the stored consumer offset.
func NextStrategy() PollingStrategy { return PollingStrategy{Kind: PollNext} }

// Validate checks the kind is one of 1..5.
func (s PollingStrategy) Validate() error {
	if !s.Kind.valid() {
		return ErrInvalidCommand
	}
	return nil
}

// AppendTo appends the 9-byte encoding.
func (s PollingStrategy) AppendTo(dst []byte) []byte {
	dst = append(dst, byte(s.Kind))
	return appendU64(dst, s.Value)
}

// Decode reads exactly 9 bytes; an unknown kind is ErrInvalidCommand.
func (s *PollingStrategy) Decode(src []byte) error {
	r := newReader(src)
	*s = r.pollingStrategy()
	return r.finish()
}

func (r *reader) pollingStrategy() PollingStrategy {
	kind := PollingKind(r.u8())
	v := r.u64()
	if r.err != nil {
		return PollingStrategy{}
	}
	if !kind.valid() {
		r.fail(ErrInvalidCommand)
		return PollingStrategy{}
	}
	return PollingStrategy{Kind: kind, Value: v}
}
