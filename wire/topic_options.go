package wire

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sort"
)

// OptionScope is the resource an option catalog belongs to; it is the
// [scope u8] of DESCRIBE_OPTIONS (commands.md §13).
type OptionScope uint8

// Option scopes.
const (
	OptionScopeTopic  OptionScope = 1
	OptionScopeStream OptionScope = 2
	OptionScopeUser   OptionScope = 3
)

// Valid reports whether s is a defined scope (1..3).
func (s OptionScope) Valid() bool { return s >= OptionScopeTopic && s <= OptionScopeUser }

// String names the scope ("topic", "stream", "user") or "scope(N)".
func (s OptionScope) String() string {
	switch s {
	case OptionScopeTopic:
		return "topic"
	case OptionScopeStream:
		return "stream"
	case OptionScopeUser:
		return "user"
	}
	return "scope(" + itoa(uint64(s)) + ")"
}

// Keys of the topic option catalog (encodings.md, "Topic option catalog").
const (
	TopicOptCompressionAlgorithm         = "compression_algorithm"
	TopicOptMessageExpiry                = "message_expiry"
	TopicOptMaxTopicSize                 = "max_topic_size"
	TopicOptSegmentSize                  = "segment_size"
	TopicOptEnforceFsync                 = "enforce_fsync"
	TopicOptMessagesRequiredToSave       = "messages_required_to_save"
	TopicOptSizeOfMessagesRequiredToSave = "size_of_messages_required_to_save"
	TopicOptPreallocateSegments          = "preallocate_segments"
	// TopicOptReplicationFactor is Iggo's key for the number of nodes
	// that hold each partition of the topic in cluster mode (create-only;
	// 0 or absent = the cluster's cluster.replication_factor).
	TopicOptReplicationFactor = "replication_factor"
	// TopicOptDurability and TopicOptConsumerOffsetDurability are the
	// catalog keys of the published 0.11.0 SDKs (iggy_common 0.11.0), which
	// send both, as the strings "replicated" or "persisted", on every
	// CREATE_TOPIC. Iggo keeps enforce_fsync too (the catalog of
	// encodings.md, sent by older SDKs): durability is another name for it
	// (persisted = enforce_fsync true); consumer_offset_durability =
	// persisted makes consumer-offset writes durable before their reply.
	TopicOptDurability               = "durability"
	TopicOptConsumerOffsetDurability = "consumer_offset_durability"
	// TopicOptLocalRetentionSize is Iggo's key for the bytes of uploaded
	// sealed segments each partition of the topic keeps on local disk
	// with tiered storage (updatable; 0 = the server's
	// tiered_storage.local_retention_size, u64::MAX = keep all).
	TopicOptLocalRetentionSize = "local_retention_size"
	// TopicOptLocalRetentionAge is Iggo's key for the age in microseconds
	// past which uploaded sealed data is dropped from local disk with
	// tiered storage (updatable; 0 = the server's
	// tiered_storage.local_retention_age, u64::MAX = no age rule).
	TopicOptLocalRetentionAge = "local_retention_age"
)

// Values of the durability keys.
const (
	// DurabilityReplicated acknowledges once the write is committed, without
	// waiting for stable storage (the default).
	DurabilityReplicated = "replicated"
	// DurabilityPersisted acknowledges only once the write is on stable
	// storage (fdatasync).
	DurabilityPersisted = "persisted"
)

// Sentinels and limits of the topic options (encodings.md, "Topic option
// catalog"; semantics.md §3.4 and §8).
const (
	// ExpiryNever is the message_expiry meaning "never expire" (u64::MAX);
	// 0 means "server default", which is also never.
	ExpiryNever uint64 = math.MaxUint64
	// SizeUnlimited is the max_topic_size meaning "unlimited" (u64::MAX);
	// 0 means "server default", which is also unlimited.
	SizeUnlimited uint64 = math.MaxUint64
	// LocalRetentionKeepAll is the local_retention_size meaning "keep
	// every uploaded sealed segment on local disk" (u64::MAX); 0 means
	// the server's tiered_storage.local_retention_size.
	LocalRetentionKeepAll uint64 = math.MaxUint64
	// LocalRetentionNoAge is the local_retention_age meaning "no age
	// rule" (u64::MAX); 0 means the server's
	// tiered_storage.local_retention_age.
	LocalRetentionNoAge uint64 = math.MaxUint64

	// DefaultSegmentSize is the segment_size default: 1 GiB.
	DefaultSegmentSize uint64 = 1 << 30
	// MinSegmentSize is the smallest segment_size: 1 MiB.
	MinSegmentSize uint64 = 1 << 20
	// MaxSegmentSize is the largest segment_size: 1 GiB.
	MaxSegmentSize uint64 = 1 << 30
	// SegmentSizeMultiple is the unit segment_size must be a multiple of.
	SegmentSizeMultiple uint64 = 512

	// DefaultMessagesRequiredToSave is the messages_required_to_save default.
	DefaultMessagesRequiredToSave uint32 = 1024
	// MaxMessagesRequiredToSave is the largest messages_required_to_save
	// (the smallest is 1).
	MaxMessagesRequiredToSave uint32 = 16777216

	// DefaultSizeOfMessagesRequiredToSave is the
	// size_of_messages_required_to_save default: 1 MiB.
	DefaultSizeOfMessagesRequiredToSave uint64 = 1 << 20
	// MaxSizeOfMessagesRequiredToSave is its largest value: 1 GiB.
	MaxSizeOfMessagesRequiredToSave uint64 = 1 << 30

	// MaxPreallocationBytes caps segment_size × partitions_count when
	// preallocate_segments is true: 64 GiB.
	MaxPreallocationBytes uint64 = 64 << 30
)

// OptionSpec describes one key of an option catalog: the data behind
// DESCRIBE_OPTIONS and the create/update checks.
type OptionSpec struct {
	// Key is the option key.
	Key string
	// Kind is the canonical kind: explicit values are re-encoded in it and
	// the default is encoded in it.
	Kind OptionKind
	// Default is the default value encoded in Kind: the derived entry a
	// create stores when the key is absent.
	Default []byte
	// Updatable reports whether UPDATE_TOPIC may change the key; the other
	// keys are create-only (an update naming them is refused with 4041).
	Updatable bool
	// Description is free text for DESCRIBE_OPTIONS (server-defined).
	Description string
}

// Describe returns the DESCRIBE_OPTIONS entry of the spec.
func (s OptionSpec) Describe() OptionDescription {
	return OptionDescription{Key: s.Key, Kind: s.Kind, Default: append([]byte(nil), s.Default...), Description: s.Description}
}

// topicCatalog is the topic option catalog, sorted by key bytes (the order
// the reference server uses in reply blocks).
var topicCatalog = [...]OptionSpec{
	{Key: TopicOptCompressionAlgorithm, Kind: OptionKindString, Default: []byte("none"), Updatable: true,
		Description: `compression setting recorded for the topic: "none" or "gzip" (Uint8 1 or 2 also accepted); stored only`},
	{Key: TopicOptConsumerOffsetDurability, Kind: OptionKindString, Default: []byte(DurabilityReplicated),
		Description: `"persisted": consumer-offset writes are fsynced before they are acknowledged; "replicated" (default): they are not`},
	{Key: TopicOptDurability, Kind: OptionKindString, Default: []byte(DurabilityReplicated),
		Description: `"persisted": every saved batch is fsynced before it is acknowledged (the same as enforce_fsync = true); "replicated" (default): it is not`},
	{Key: TopicOptEnforceFsync, Kind: OptionKindBool, Default: []byte{0},
		Description: "fsync every saved batch before acknowledging it (the same as durability = \"persisted\")"},
	{Key: TopicOptLocalRetentionAge, Kind: OptionKindUint64, Default: u64Bytes(0), Updatable: true,
		Description: `tiered storage: uploaded sealed data older than this many microseconds is dropped from local disk; 0 = the server's tiered_storage.local_retention_age, u64::MAX = no age rule; a duration string such as "2 days" is accepted`},
	{Key: TopicOptLocalRetentionSize, Kind: OptionKindUint64, Default: u64Bytes(0), Updatable: true,
		Description: `tiered storage: bytes of uploaded sealed segments each partition keeps on local disk; 0 = the server's tiered_storage.local_retention_size, u64::MAX = keep all; a size string such as "10 GiB" is accepted`},
	{Key: TopicOptMaxTopicSize, Kind: OptionKindUint64, Default: u64Bytes(SizeUnlimited), Updatable: true,
		Description: `largest topic size in bytes before the oldest segments are removed; 0 = server default, u64::MAX = unlimited; a size string such as "1 GiB" is accepted`},
	{Key: TopicOptMessageExpiry, Kind: OptionKindUint64, Default: u64Bytes(ExpiryNever), Updatable: true,
		Description: `message retention in microseconds; 0 = server default, u64::MAX = never; a duration string such as "7 days" is accepted`},
	{Key: TopicOptMessagesRequiredToSave, Kind: OptionKindUint32, Default: u32Bytes(DefaultMessagesRequiredToSave),
		Description: "number of buffered messages that triggers a save to disk (1..=16777216)"},
	{Key: TopicOptPreallocateSegments, Kind: OptionKindBool, Default: []byte{0},
		Description: "preallocate segment files; segment_size x partitions_count must not exceed 64 GiB"},
	{Key: TopicOptReplicationFactor, Kind: OptionKindUint8, Default: []byte{0},
		Description: "nodes holding each partition in cluster mode (1..=255, at most the node count); 0 = the cluster's replication_factor; create-only"},
	{Key: TopicOptSegmentSize, Kind: OptionKindUint64, Default: u64Bytes(DefaultSegmentSize),
		Description: "segment size in bytes: a multiple of 512 from 1 MiB to 1 GiB; 0 = default"},
	{Key: TopicOptSizeOfMessagesRequiredToSave, Kind: OptionKindUint64, Default: u64Bytes(DefaultSizeOfMessagesRequiredToSave),
		Description: "buffered bytes that trigger a save to disk (at most 1 GiB); 0 = default"},
}

func u64Bytes(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func u32Bytes(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// OptionCatalog returns a copy of the catalog of scope, sorted by key. The
// stream and user catalogs are empty (nil), as is an undefined scope.
func OptionCatalog(scope OptionScope) []OptionSpec {
	if scope != OptionScopeTopic {
		return nil
	}
	out := make([]OptionSpec, len(topicCatalog))
	for i, s := range topicCatalog {
		s.Default = append([]byte(nil), s.Default...)
		out[i] = s
	}
	return out
}

// LookupOption returns the catalog entry for key in scope.
func LookupOption(scope OptionScope, key string) (OptionSpec, bool) {
	if scope == OptionScopeTopic {
		for _, s := range topicCatalog {
			if s.Key == key {
				return s, true
			}
		}
	}
	return OptionSpec{}, false
}

// DescribeCatalog returns the DESCRIBE_OPTIONS reply for scope: the topic
// catalog's entries, or an empty list for stream and user.
func DescribeCatalog(scope OptionScope) OptionDescriptions {
	cat := OptionCatalog(scope)
	if len(cat) == 0 {
		return nil
	}
	out := make(OptionDescriptions, len(cat))
	for i, s := range cat {
		out[i] = s.Describe()
	}
	return out
}

// ValidateOptionKeys checks a request block against the catalog of scope:
// the structural rules of Options.Validate, then ErrUnsupportedOptionKey
// (4041) for any key outside the catalog. Stream and user catalogs are
// empty, so for them any key is refused (commands.md §202, §33).
func ValidateOptionKeys(scope OptionScope, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	for _, opt := range o {
		if _, ok := LookupOption(scope, opt.Key); !ok {
			return ErrUnsupportedOptionKey
		}
	}
	return nil
}

// TopicSettings are the typed values of the topic option catalog.
// MessageExpiry and MaxTopicSize keep the wire sentinels: 0 = server
// default, u64::MAX = never / unlimited. Settings resolved from options
// never hold 0 for them (an explicit 0 is "not given", see
// UnsetByZero), but a TopicHeader or an older state may.
type TopicSettings struct {
	CompressionAlgorithm CompressionAlgorithm
	MessageExpiry        uint64 // microseconds
	MaxTopicSize         uint64 // bytes
	SegmentSize          uint64 // bytes
	EnforceFsync         bool   // also durability = "persisted"
	// ConsumerOffsetFsync is consumer_offset_durability = "persisted".
	ConsumerOffsetFsync          bool
	MessagesRequiredToSave       uint32
	SizeOfMessagesRequiredToSave uint64 // bytes
	PreallocateSegments          bool
	// ReplicationFactor is the replica count of each partition in cluster
	// mode; 0 means the cluster's default.
	ReplicationFactor uint8
	// LocalRetentionSize is local_retention_size in bytes: 0 = the
	// server's tiered_storage.local_retention_size, LocalRetentionKeepAll
	// = keep every uploaded sealed segment locally.
	LocalRetentionSize uint64
	// LocalRetentionAge is local_retention_age in microseconds: 0 = the
	// server's tiered_storage.local_retention_age, LocalRetentionNoAge =
	// no age rule.
	LocalRetentionAge uint64
}

// DefaultTopicSettings returns the catalog defaults.
func DefaultTopicSettings() TopicSettings {
	return TopicSettings{
		CompressionAlgorithm:         CompressionNone,
		MessageExpiry:                ExpiryNever,
		MaxTopicSize:                 SizeUnlimited,
		SegmentSize:                  DefaultSegmentSize,
		MessagesRequiredToSave:       DefaultMessagesRequiredToSave,
		SizeOfMessagesRequiredToSave: DefaultSizeOfMessagesRequiredToSave,
	}
}

// option returns the setting for key encoded in its canonical kind.
func (s *TopicSettings) option(key string) Option {
	switch key {
	case TopicOptCompressionAlgorithm:
		return StringOption(key, s.CompressionAlgorithm.String())
	case TopicOptMessageExpiry:
		return Uint64Option(key, s.MessageExpiry)
	case TopicOptMaxTopicSize:
		return Uint64Option(key, s.MaxTopicSize)
	case TopicOptSegmentSize:
		return Uint64Option(key, s.SegmentSize)
	case TopicOptEnforceFsync:
		return BoolOption(key, s.EnforceFsync)
	case TopicOptDurability:
		return StringOption(key, durabilityName(s.EnforceFsync))
	case TopicOptConsumerOffsetDurability:
		return StringOption(key, durabilityName(s.ConsumerOffsetFsync))
	case TopicOptMessagesRequiredToSave:
		return Uint32Option(key, s.MessagesRequiredToSave)
	case TopicOptSizeOfMessagesRequiredToSave:
		return Uint64Option(key, s.SizeOfMessagesRequiredToSave)
	case TopicOptPreallocateSegments:
		return BoolOption(key, s.PreallocateSegments)
	case TopicOptReplicationFactor:
		return Uint8Option(key, s.ReplicationFactor)
	case TopicOptLocalRetentionSize:
		return Uint64Option(key, s.LocalRetentionSize)
	case TopicOptLocalRetentionAge:
		return Uint64Option(key, s.LocalRetentionAge)
	}
	return Option{}
}

// Options returns every catalog key with its value in canonical kind,
// sorted by key.
func (s TopicSettings) Options() Options {
	out := make(Options, len(topicCatalog))
	for i, spec := range topicCatalog {
		out[i] = s.option(spec.Key)
	}
	return out
}

// set parses opt (whose key is in the catalog) into s, checking the value's
// kind and the per-key range; a bad value is ErrInvalidOptionValue (4042).
func (s *TopicSettings) set(opt Option) error {
	switch opt.Key {
	case TopicOptCompressionAlgorithm:
		c, err := compressionValue(opt)
		s.CompressionAlgorithm = c
		return err
	case TopicOptMessageExpiry:
		v, err := u64Value(opt, parseExpiry)
		s.MessageExpiry = v
		return err
	case TopicOptMaxTopicSize:
		v, err := u64Value(opt, parseByteSize)
		s.MaxTopicSize = v
		return err
	case TopicOptSegmentSize:
		v, err := u64Value(opt, parseByteSize)
		if err == nil && (v < MinSegmentSize || v > MaxSegmentSize || v%SegmentSizeMultiple != 0) {
			err = ErrInvalidOptionValue
		}
		s.SegmentSize = v
		return err
	case TopicOptEnforceFsync:
		v, err := boolValue(opt)
		s.EnforceFsync = v
		return err
	case TopicOptDurability:
		v, err := durabilityValue(opt)
		s.EnforceFsync = v
		return err
	case TopicOptConsumerOffsetDurability:
		v, err := durabilityValue(opt)
		s.ConsumerOffsetFsync = v
		return err
	case TopicOptMessagesRequiredToSave:
		v, err := u32Value(opt)
		if err == nil && (v < 1 || v > MaxMessagesRequiredToSave) {
			err = ErrInvalidOptionValue
		}
		s.MessagesRequiredToSave = v
		return err
	case TopicOptSizeOfMessagesRequiredToSave:
		v, err := u64Value(opt, parseByteSize)
		if err == nil && v > MaxSizeOfMessagesRequiredToSave {
			err = ErrInvalidOptionValue
		}
		s.SizeOfMessagesRequiredToSave = v
		return err
	case TopicOptPreallocateSegments:
		v, err := boolValue(opt)
		s.PreallocateSegments = v
		return err
	case TopicOptReplicationFactor:
		v, err := u8Value(opt)
		s.ReplicationFactor = v
		return err
	case TopicOptLocalRetentionSize:
		v, err := u64Value(opt, parseByteSize)
		s.LocalRetentionSize = v
		return err
	case TopicOptLocalRetentionAge:
		v, err := u64Value(opt, parseExpiry)
		s.LocalRetentionAge = v
		return err
	}
	return ErrUnsupportedOptionKey
}

// UnsetByZero reports whether opt is a numeric option whose value is zero
// where the reference treats zero as "not given": the key then resolves
// as if absent (its default goes to the derived block, the explicit block
// lacks it; an update leaves the setting unchanged). The value must be of
// an accepted kind; a String form counts by its parsed value ("0 B").
// Per key (docs/DESIGN.md, "Reference parity"):
//
//   - message_expiry, max_topic_size: zero already meant "server
//     default" on the wire; it is now not given at all;
//   - segment_size, size_of_messages_required_to_save: a zero size is
//     meaningless (seen in the reference for segment_size);
//   - messages_required_to_save is not among them: the published
//     catalog (iggy_common 0.11.0) refuses 0 with InvalidOptionValue
//     ("must be non-zero"), and so does Iggo;
//   - enforce_fsync, preallocate_segments: false is a real value, never
//     unset;
//   - compression_algorithm: 0 is not a compression code (codes start at
//     1), so Uint8 0 stays InvalidOptionValue (a choice);
//   - local_retention_size, local_retention_age (Iggo's keys) are not
//     among them: 0 is a real value, "the server's setting", so an update
//     with 0 returns the topic to the server's tiered_storage value.
func UnsetByZero(opt Option) bool {
	switch opt.Key {
	case TopicOptMessageExpiry:
		v, err := u64Value(opt, parseExpiry)
		return err == nil && v == 0
	case TopicOptMaxTopicSize, TopicOptSegmentSize, TopicOptSizeOfMessagesRequiredToSave:
		v, err := u64Value(opt, parseByteSize)
		return err == nil && v == 0
	case TopicOptReplicationFactor:
		v, err := u8Value(opt)
		return err == nil && v == 0
	}
	return false
}

// withoutUnset returns o without the options UnsetByZero drops; o itself
// when none is dropped.
func withoutUnset(o Options) Options {
	keep := -1
	for i, opt := range o {
		if UnsetByZero(opt) {
			keep = i
			break
		}
	}
	if keep < 0 {
		return o
	}
	out := append(Options(nil), o[:keep]...)
	for _, opt := range o[keep+1:] {
		if !UnsetByZero(opt) {
			out = append(out, opt)
		}
	}
	return out
}

// checkTopicSize enforces "max_topic_size must not be below one segment"
// (semantics.md §3.4): ErrInvalidTopicSize (1019). The sentinels 0 and
// u64::MAX are exempt.
func (s *TopicSettings) checkTopicSize() error {
	if s.MaxTopicSize != 0 && s.MaxTopicSize != SizeUnlimited && s.MaxTopicSize < s.SegmentSize {
		return ErrInvalidTopicSize
	}
	return nil
}

// TopicOptions is a topic's resolved option state: the typed settings and
// the two blocks TopicHeader reports. Explicit holds the keys the client
// sent at create (re-encoded in canonical kind) or later updated (bytes as
// sent); Derived holds every other catalog key with its default. Both are
// sorted by key.
type TopicOptions struct {
	Settings TopicSettings
	Explicit Options
	Derived  Options
}

// NewTopicOptions validates a CREATE_TOPIC options block and applies the
// defaults (encodings.md, "Options block"; semantics.md §3.4):
//   - structural rules (Options.Validate);
//   - a key outside the catalog → ErrUnsupportedOptionKey (4041), checked
//     for every key before any value;
//   - a numeric key with an explicit zero (UnsetByZero) counts as absent:
//     it is derived with its default, not explicit;
//   - enforce_fsync and durability both given with different meanings
//     (true with "replicated", false with "persisted") →
//     ErrInvalidOptionValue (4042);
//   - a value of the wrong kind, out of range, or a preallocation of more
//     than MaxPreallocationBytes (segment_size × partitionsCount) →
//     ErrInvalidOptionValue (4042);
//   - max_topic_size below segment_size → ErrInvalidTopicSize (1019).
//
// The partitions bound (≤ 1000, 2015) belongs to CreateTopic.Validate.
func NewTopicOptions(o Options, partitionsCount uint32) (TopicOptions, error) {
	if err := ValidateOptionKeys(OptionScopeTopic, o); err != nil {
		return TopicOptions{}, err
	}
	o = withoutUnset(o)
	t := TopicOptions{Settings: DefaultTopicSettings()}
	for _, opt := range o {
		if err := t.Settings.set(opt); err != nil {
			return TopicOptions{}, err
		}
	}
	if err := checkDurabilityAlias(o); err != nil {
		return TopicOptions{}, err
	}
	s := &t.Settings
	if s.PreallocateSegments {
		hi, lo := bits.Mul64(s.SegmentSize, uint64(partitionsCount))
		if hi != 0 || lo > MaxPreallocationBytes {
			return TopicOptions{}, ErrInvalidOptionValue
		}
	}
	if err := s.checkTopicSize(); err != nil {
		return TopicOptions{}, err
	}
	for _, spec := range topicCatalog {
		if _, ok := o.Get(spec.Key); ok {
			t.Explicit = append(t.Explicit, s.option(spec.Key))
		} else {
			t.Derived = append(t.Derived, s.option(spec.Key))
		}
	}
	return t, nil
}

// FillTopic copies the effective settings and both option blocks into the
// matching TopicHeader fields (message_expiry, compression_algorithm,
// max_topic_size, explicit and derived options).
func (t *TopicOptions) FillTopic(h *Topic) {
	h.MessageExpiry = t.Settings.MessageExpiry
	h.CompressionAlgorithm = t.Settings.CompressionAlgorithm
	h.MaxTopicSize = t.Settings.MaxTopicSize
	h.Options = t.Explicit
	h.DerivedOptions = t.Derived
}

// ValidateTopicUpdate checks an UPDATE_TOPIC options block without the
// topic at hand: structural rules; a key outside the catalog or a
// create-only key → ErrUnsupportedOptionKey (4041), even with a zero
// value (keys are checked before values); a bad value →
// ErrInvalidOptionValue (4042). The max_topic_size/segment_size rule (1019)
// needs the topic: TopicOptions.Update applies it.
func ValidateTopicUpdate(o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	for _, opt := range o {
		if spec, ok := LookupOption(OptionScopeTopic, opt.Key); !ok || !spec.Updatable {
			return ErrUnsupportedOptionKey
		}
	}
	s := DefaultTopicSettings()
	for _, opt := range withoutUnset(o) {
		if err := s.set(opt); err != nil {
			return err
		}
	}
	return nil
}

// Update applies an UPDATE_TOPIC options block with patch semantics: absent
// keys keep their values, each given key is stored in Explicit with its
// value bytes as sent and leaves Derived. A key with an explicit zero
// (UnsetByZero: message_expiry, max_topic_size) counts as not given and
// keeps its value too. On any error (those of ValidateTopicUpdate, or
// ErrInvalidTopicSize when the new max_topic_size is below the segment
// size) t is unchanged.
func (t *TopicOptions) Update(o Options) error {
	if err := ValidateTopicUpdate(o); err != nil {
		return err
	}
	o = withoutUnset(o)
	s := t.Settings
	for _, opt := range o {
		if err := s.set(opt); err != nil {
			return err
		}
	}
	if err := s.checkTopicSize(); err != nil {
		return err
	}
	t.Settings = s
	// Copy before patching so slices shared with the caller stay intact.
	t.Explicit = append(Options(nil), t.Explicit...)
	t.Derived = append(Options(nil), t.Derived...)
	for _, opt := range o {
		opt.Value = append([]byte(nil), opt.Value...)
		t.Explicit = putOption(t.Explicit, opt)
		t.Derived = removeOption(t.Derived, opt.Key)
	}
	return nil
}

// CompleteDerived adds to Derived, with the value of its setting, every
// catalog key that neither block holds, keeping Derived sorted: a topic
// stored before a key existed (an older metadata snapshot) then reports
// that key as a topic created now does. Derived is copied first when
// anything is added.
func (t *TopicOptions) CompleteDerived() {
	copied := false
	for _, spec := range topicCatalog {
		if _, ok := t.Explicit.Get(spec.Key); ok {
			continue
		}
		if _, ok := t.Derived.Get(spec.Key); ok {
			continue
		}
		if !copied {
			t.Derived = append(Options(nil), t.Derived...)
			copied = true
		}
		t.Derived = putOption(t.Derived, t.Settings.option(spec.Key))
	}
}

// putOption replaces or inserts opt, keeping o sorted by key.
func putOption(o Options, opt Option) Options {
	i := sort.Search(len(o), func(i int) bool { return o[i].Key >= opt.Key })
	if i < len(o) && o[i].Key == opt.Key {
		o[i] = opt
		return o
	}
	o = append(o, Option{})
	copy(o[i+1:], o[i:])
	o[i] = opt
	return o
}

// removeOption deletes key from o, keeping the order.
func removeOption(o Options, key string) Options {
	for i := range o {
		if o[i].Key == key {
			return append(o[:i], o[i+1:]...)
		}
	}
	return o
}

// compressionValue accepts String none/gzip or Uint8 code 1/2.
func compressionValue(opt Option) (CompressionAlgorithm, error) {
	switch opt.Kind {
	case OptionKindString:
		return ParseCompressionAlgorithm(string(opt.Value))
	case OptionKindUint8:
		if len(opt.Value) == 1 && CompressionAlgorithm(opt.Value[0]).Valid() {
			return CompressionAlgorithm(opt.Value[0]), nil
		}
	}
	return 0, ErrInvalidOptionValue
}

// u64Value accepts Uint64 (8 bytes) or a String parsed by parse.
func u64Value(opt Option, parse func(string) (uint64, bool)) (uint64, error) {
	switch opt.Kind {
	case OptionKindUint64:
		if len(opt.Value) == 8 {
			return binary.LittleEndian.Uint64(opt.Value), nil
		}
	case OptionKindString:
		if v, ok := parse(string(opt.Value)); ok {
			return v, nil
		}
	}
	return 0, ErrInvalidOptionValue
}

// u8Value accepts any unsigned integer kind or a String of decimal digits
// whose value fits in a byte (a replica count).
func u8Value(opt Option) (uint8, error) {
	var v uint64
	switch {
	case opt.Kind == OptionKindUint8 && len(opt.Value) == 1:
		v = uint64(opt.Value[0])
	case opt.Kind == OptionKindUint16 && len(opt.Value) == 2:
		v = uint64(binary.LittleEndian.Uint16(opt.Value))
	case opt.Kind == OptionKindUint32 && len(opt.Value) == 4:
		v = uint64(binary.LittleEndian.Uint32(opt.Value))
	case opt.Kind == OptionKindUint64 && len(opt.Value) == 8:
		v = binary.LittleEndian.Uint64(opt.Value)
	case opt.Kind == OptionKindString:
		d, n, ok := parseDigits(string(opt.Value))
		if !ok || n != len(opt.Value) {
			return 0, ErrInvalidOptionValue
		}
		v = d
	default:
		return 0, ErrInvalidOptionValue
	}
	if v > math.MaxUint8 {
		return 0, ErrInvalidOptionValue
	}
	return uint8(v), nil
}

// u32Value accepts Uint32 (4 bytes) or a String of decimal digits.
func u32Value(opt Option) (uint32, error) {
	switch opt.Kind {
	case OptionKindUint32:
		if len(opt.Value) == 4 {
			return binary.LittleEndian.Uint32(opt.Value), nil
		}
	case OptionKindString:
		if v, n, ok := parseDigits(string(opt.Value)); ok && n == len(opt.Value) && v <= math.MaxUint32 {
			return uint32(v), nil
		}
	}
	return 0, ErrInvalidOptionValue
}

// boolValue accepts Bool (one byte, 0 or 1) or String "true"/"false" in any
// ASCII case.
func boolValue(opt Option) (bool, error) {
	switch opt.Kind {
	case OptionKindBool:
		if len(opt.Value) == 1 && opt.Value[0] <= 1 {
			return opt.Value[0] == 1, nil
		}
	case OptionKindString:
		switch s := string(opt.Value); {
		case equalFoldASCII(s, "true"):
			return true, nil
		case equalFoldASCII(s, "false"):
			return false, nil
		}
	}
	return false, ErrInvalidOptionValue
}

// The string forms of option values. encodings.md defers the grammars to
// the Rust humantime crate and Iggy's byte-size parser and lets a Go server
// accept a subset; the subsets accepted here are documented on each parser.

// parseDigits reads the leading ASCII decimal digits of s: the value, the
// number of bytes consumed, and false when there is no digit or the value
// overflows a u64.
func parseDigits(s string) (v uint64, n int, ok bool) {
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		d := uint64(s[n] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, 0, false
		}
		v = v*10 + d
		n++
	}
	return v, n, n > 0
}

// trimSpaceASCII drops leading and trailing ASCII spaces and tabs.
func trimSpaceASCII(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// Microseconds per humantime unit.
const (
	usPerMs   = 1000
	usPerSec  = 1000 * usPerMs
	usPerMin  = 60 * usPerSec
	usPerHour = 60 * usPerMin
	usPerDay  = 24 * usPerHour
	usPerWeek = 7 * usPerDay
	// humantime's month is 30.44 days and its year 365.25 days.
	usPerMonth = 2630016 * usPerSec
	usPerYear  = 31557600 * usPerSec
)

// expiryUnit returns the microseconds per unit (0 for nanoseconds, which
// are summed separately), and false for an unknown unit. Units are
// case-sensitive as in humantime ("M" is months, "m" minutes).
func expiryUnit(u string) (uint64, bool) {
	switch u {
	case "nsec", "ns":
		return 0, true
	case "usec", "us", "µs":
		return 1, true
	case "msec", "ms":
		return usPerMs, true
	case "seconds", "second", "secs", "sec", "s":
		return usPerSec, true
	case "minutes", "minute", "mins", "min", "m":
		return usPerMin, true
	case "hours", "hour", "hrs", "hr", "h":
		return usPerHour, true
	case "days", "day", "d":
		return usPerDay, true
	case "weeks", "week", "w":
		return usPerWeek, true
	case "months", "month", "M":
		return usPerMonth, true
	case "years", "year", "y":
		return usPerYear, true
	}
	return 0, false
}

// parseExpiry parses a message_expiry string into microseconds. Accepted:
// "none", "unlimited", "never", "never_expire" (any ASCII case) → never
// (u64::MAX); otherwise a humantime duration, one or more
// <digits><optional spaces><unit> items ("7 days", "1h 30m", "250ms"),
// with the unit names of humantime. Nanoseconds are truncated to whole
// microseconds. Overflow, a missing unit or an unknown unit → false.
func parseExpiry(s string) (uint64, bool) {
	s = trimSpaceASCII(s)
	for _, w := range [...]string{"none", "unlimited", "never", "never_expire"} {
		if equalFoldASCII(s, w) {
			return ExpiryNever, true
		}
	}
	if s == "" {
		return 0, false
	}
	var micros, nanos uint64
	for s != "" {
		v, n, ok := parseDigits(s)
		if !ok {
			return 0, false
		}
		s = trimSpaceASCII(s[n:])
		j := 0
		for j < len(s) && (('a' <= s[j] && s[j] <= 'z') || ('A' <= s[j] && s[j] <= 'Z') || s[j] >= 0x80) {
			j++
		}
		mult, ok := expiryUnit(s[:j])
		if !ok {
			return 0, false
		}
		s = trimSpaceASCII(s[j:])
		var carry uint64
		if mult == 0 {
			nanos, carry = bits.Add64(nanos, v, 0)
		} else {
			var hi, lo uint64
			hi, lo = bits.Mul64(v, mult)
			micros, carry = bits.Add64(micros, lo, 0)
			carry |= hi
		}
		if carry != 0 {
			return 0, false
		}
	}
	total, carry := bits.Add64(micros, nanos/1000, 0)
	return total, carry == 0
}

// sizeUnit returns the bytes per unit of a size string, ASCII case
// ignored: "" and "b" are bytes; k, m, g, t, p, e with optional "b" are
// decimal (1000^n); ki, mi, gi, ti, pi, ei with optional "b" are binary
// (1024^n).
func sizeUnit(u string) (uint64, bool) {
	if u == "" || equalFoldASCII(u, "b") {
		return 1, true
	}
	var low [3]byte
	if len(u) > len(low) {
		return 0, false
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	l := low[:len(u)]
	if l[len(l)-1] == 'b' {
		l = l[:len(l)-1]
	}
	binaryUnit := len(l) == 2 && l[1] == 'i'
	if len(l) == 0 || len(l) > 2 || (len(l) == 2 && !binaryUnit) {
		return 0, false
	}
	var exp uint
	switch l[0] {
	case 'k':
		exp = 1
	case 'm':
		exp = 2
	case 'g':
		exp = 3
	case 't':
		exp = 4
	case 'p':
		exp = 5
	case 'e':
		exp = 6
	default:
		return 0, false
	}
	if binaryUnit {
		return 1 << (10 * exp), true
	}
	m := uint64(1)
	for range exp {
		m *= 1000
	}
	return m, true
}

// maxSizeFractionDigits bounds the fraction of a size string ("1.5 GiB").
const maxSizeFractionDigits = 9

// parseByteSize parses a byte-size string: "unlimited" or "none" (any ASCII
// case) → u64::MAX; otherwise <digits>[.<1..9 digits>][spaces]<unit> with
// the units of sizeUnit ("1 GiB", "512MB", "1048576"). A fraction is
// rounded down to whole bytes. Overflow or an unknown unit → false.
func parseByteSize(s string) (uint64, bool) {
	s = trimSpaceASCII(s)
	if equalFoldASCII(s, "unlimited") || equalFoldASCII(s, "none") {
		return SizeUnlimited, true
	}
	whole, n, ok := parseDigits(s)
	if !ok {
		return 0, false
	}
	s = s[n:]
	var frac, scale uint64 = 0, 1
	if len(s) > 0 && s[0] == '.' {
		var k int
		frac, k, ok = parseDigits(s[1:])
		if !ok || k > maxSizeFractionDigits {
			return 0, false
		}
		for range k {
			scale *= 10
		}
		s = s[1+k:]
	}
	mult, ok := sizeUnit(trimSpaceASCII(s))
	if !ok {
		return 0, false
	}
	hi, total := bits.Mul64(whole, mult)
	if hi != 0 {
		return 0, false
	}
	// frac < scale, so frac*mult/scale < mult and the quotient fits.
	fhi, flo := bits.Mul64(frac, mult)
	part, _ := bits.Div64(fhi, flo, scale)
	total, carry := bits.Add64(total, part, 0)
	return total, carry == 0
}

// durabilityName is the durability value for a persisted flag.
func durabilityName(persisted bool) string {
	if persisted {
		return DurabilityPersisted
	}
	return DurabilityReplicated
}

// durabilityValue accepts the String "replicated" or "persisted" in any
// ASCII case (the published catalog's rule: String kind only) and reports
// whether it is persisted.
func durabilityValue(opt Option) (bool, error) {
	if opt.Kind == OptionKindString {
		switch s := string(opt.Value); {
		case equalFoldASCII(s, DurabilityReplicated):
			return false, nil
		case equalFoldASCII(s, DurabilityPersisted):
			return true, nil
		}
	}
	return false, ErrInvalidOptionValue
}

// checkDurabilityAlias refuses a block (already valid value by value) that
// gives enforce_fsync and durability with different meanings: they name
// one setting. A choice: the reference knows only one of the two keys.
func checkDurabilityAlias(o Options) error {
	f, okF := o.Get(TopicOptEnforceFsync)
	d, okD := o.Get(TopicOptDurability)
	if !okF || !okD {
		return nil
	}
	fv, err := boolValue(f)
	if err != nil {
		return err
	}
	dv, err := durabilityValue(d)
	if err != nil {
		return err
	}
	if fv != dv {
		return ErrInvalidOptionValue
	}
	return nil
}
