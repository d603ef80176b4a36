package wire

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"
)

func TestTopicCatalog(t *testing.T) {
	cat := OptionCatalog(OptionScopeTopic)
	want := []struct {
		key       string
		kind      OptionKind
		updatable bool
	}{
		{TopicOptCompressionAlgorithm, OptionKindString, true},
		{TopicOptConsumerOffsetDurability, OptionKindString, false},
		{TopicOptDurability, OptionKindString, false},
		{TopicOptEnforceFsync, OptionKindBool, false},
		{TopicOptLocalRetentionAge, OptionKindUint64, true},
		{TopicOptLocalRetentionSize, OptionKindUint64, true},
		{TopicOptMaxTopicSize, OptionKindUint64, true},
		{TopicOptMessageExpiry, OptionKindUint64, true},
		{TopicOptMessagesRequiredToSave, OptionKindUint32, false},
		{TopicOptPreallocateSegments, OptionKindBool, false},
		{TopicOptReplicationFactor, OptionKindUint8, false},
		{TopicOptSegmentSize, OptionKindUint64, false},
		{TopicOptSizeOfMessagesRequiredToSave, OptionKindUint64, false},
	}
	if len(cat) != len(want) {
		t.Fatalf("catalog has %d entries, want %d", len(cat), len(want))
	}
	if !sort.SliceIsSorted(cat, func(i, j int) bool { return cat[i].Key < cat[j].Key }) {
		t.Errorf("catalog is not sorted by key")
	}
	defaults := DefaultTopicSettings().Options()
	for i, w := range want {
		c := cat[i]
		if c.Key != w.key || c.Kind != w.kind || c.Updatable != w.updatable || c.Description == "" {
			t.Errorf("entry %d = %+v, want %+v", i, c, w)
		}
		if d := cmpDiff(defaults[i], Option{Key: c.Key, Kind: c.Kind, Value: c.Default}); d != "" {
			t.Errorf("%s default differs from DefaultTopicSettings (-settings +catalog):\n%s", c.Key, d)
		}
		if fs := c.Kind.FixedSize(); fs != 0 && fs != len(c.Default) {
			t.Errorf("%s default is %d bytes for kind %v", c.Key, len(c.Default), c.Kind)
		}
		if got, ok := LookupOption(OptionScopeTopic, c.Key); !ok || got.Key != c.Key {
			t.Errorf("LookupOption(%s) = %+v, %v", c.Key, got, ok)
		}
	}
	// The returned catalog is a copy.
	cat[0].Default[0] = 'X'
	if again := OptionCatalog(OptionScopeTopic); again[0].Default[0] == 'X' {
		t.Errorf("OptionCatalog returns shared storage")
	}
	for _, s := range []OptionScope{OptionScopeStream, OptionScopeUser, 0, 4} {
		if c := OptionCatalog(s); len(c) != 0 {
			t.Errorf("scope %v catalog has %d entries", s, len(c))
		}
		if _, ok := LookupOption(s, TopicOptSegmentSize); ok {
			t.Errorf("scope %v knows segment_size", s)
		}
		if d := DescribeCatalog(s); len(d) != 0 {
			t.Errorf("scope %v describes %d entries", s, len(d))
		}
	}
	desc := DescribeCatalog(OptionScopeTopic)
	if len(desc) != len(want) || desc[3].Key != TopicOptEnforceFsync || desc[3].Kind != OptionKindBool || string(desc[3].Default) != "\x00" || string(desc[2].Default) != DurabilityReplicated {
		t.Errorf("DescribeCatalog(topic) = %+v", desc)
	}
}

func TestOptionScope(t *testing.T) {
	for _, tc := range []struct {
		s     OptionScope
		valid bool
		name  string
	}{
		{0, false, "scope(0)"},
		{OptionScopeTopic, true, "topic"},
		{OptionScopeStream, true, "stream"},
		{OptionScopeUser, true, "user"},
		{4, false, "scope(4)"},
	} {
		if tc.s.Valid() != tc.valid || tc.s.String() != tc.name {
			t.Errorf("scope %d: Valid %v String %q", tc.s, tc.s.Valid(), tc.s.String())
		}
	}
}

func TestValidateOptionKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope OptionScope
		in    Options
		want  error
	}{
		{"stream empty", OptionScopeStream, nil, nil},
		{"stream any key", OptionScopeStream, Options{StringOption("compression_algorithm", "gzip")}, ErrUnsupportedOptionKey},
		{"user any key", OptionScopeUser, Options{StringOption("x", "y")}, ErrUnsupportedOptionKey},
		{"topic known key", OptionScopeTopic, Options{BoolOption(TopicOptEnforceFsync, true)}, nil},
		{"topic unknown key", OptionScopeTopic, Options{BoolOption("fsync", true)}, ErrUnsupportedOptionKey},
		{"structural first", OptionScopeStream, Options{StringOption("", "y")}, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ValidateOptionKeys(tc.scope, tc.in); !sameErr(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func sameErr(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

func TestNewTopicOptionsDefaults(t *testing.T) {
	got, err := NewTopicOptions(nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := TopicOptions{Settings: DefaultTopicSettings(), Derived: DefaultTopicSettings().Options()}
	if d := cmpDiff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	s := got.Settings
	if s.CompressionAlgorithm != CompressionNone || s.MessageExpiry != math.MaxUint64 || s.MaxTopicSize != math.MaxUint64 ||
		s.SegmentSize != 1<<30 || s.EnforceFsync || s.MessagesRequiredToSave != 1024 ||
		s.SizeOfMessagesRequiredToSave != 1<<20 || s.PreallocateSegments || s.LocalRetentionSize != 0 || s.LocalRetentionAge != 0 {
		t.Errorf("defaults = %+v", s)
	}
}

func TestNewTopicOptionsCanonical(t *testing.T) {
	in := Options{
		StringOption(TopicOptSegmentSize, "128MiB"),
		StringOption(TopicOptCompressionAlgorithm, "GZIP"),
		StringOption(TopicOptMessageExpiry, "7 days"),
		StringOption(TopicOptEnforceFsync, "true"),
		StringOption(TopicOptMessagesRequiredToSave, "16"),
		StringOption(TopicOptSizeOfMessagesRequiredToSave, "1 KiB"),
	}
	got, err := NewTopicOptions(in, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := TopicOptions{
		Settings: TopicSettings{
			CompressionAlgorithm: CompressionGzip, MessageExpiry: 7 * 24 * 3600 * 1000000, MaxTopicSize: SizeUnlimited,
			SegmentSize: 134217728, EnforceFsync: true, MessagesRequiredToSave: 16, SizeOfMessagesRequiredToSave: 1024,
		},
		Explicit: Options{
			StringOption(TopicOptCompressionAlgorithm, "gzip"),
			BoolOption(TopicOptEnforceFsync, true),
			Uint64Option(TopicOptMessageExpiry, 604800000000),
			Uint32Option(TopicOptMessagesRequiredToSave, 16),
			Uint64Option(TopicOptSegmentSize, 134217728),
			Uint64Option(TopicOptSizeOfMessagesRequiredToSave, 1024),
		},
		Derived: Options{
			StringOption(TopicOptConsumerOffsetDurability, DurabilityReplicated),
			// The effective value: enforce_fsync = true is durability persisted.
			StringOption(TopicOptDurability, DurabilityPersisted),
			Uint64Option(TopicOptLocalRetentionAge, 0),
			Uint64Option(TopicOptLocalRetentionSize, 0),
			Uint64Option(TopicOptMaxTopicSize, SizeUnlimited),
			BoolOption(TopicOptPreallocateSegments, false),
			Uint8Option(TopicOptReplicationFactor, 0),
		},
	}
	if d := cmpDiff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestNewTopicOptionsValues(t *testing.T) {
	u64 := Uint64Option
	for _, tc := range []struct {
		name       string
		in         Options
		partitions uint32
		want       error
	}{
		// compression_algorithm
		{"compression none string", Options{StringOption(TopicOptCompressionAlgorithm, "none")}, 1, nil},
		{"compression uint8 2", Options{Uint8Option(TopicOptCompressionAlgorithm, 2)}, 1, nil},
		{"compression uint8 3", Options{Uint8Option(TopicOptCompressionAlgorithm, 3)}, 1, ErrInvalidOptionValue},
		{"compression uint8 0", Options{Uint8Option(TopicOptCompressionAlgorithm, 0)}, 1, ErrInvalidOptionValue},
		{"compression zstd", Options{StringOption(TopicOptCompressionAlgorithm, "zstd")}, 1, ErrInvalidOptionValue},
		{"compression uint32 kind", Options{Uint32Option(TopicOptCompressionAlgorithm, 2)}, 1, ErrInvalidOptionValue},
		{"compression uint8 two bytes", Options{{Key: TopicOptCompressionAlgorithm, Kind: OptionKindUint8, Value: []byte{2, 0}}}, 1, ErrInvalidOptionValue},
		// message_expiry
		{"expiry uint64", Options{u64(TopicOptMessageExpiry, 3600000000)}, 1, nil},
		{"expiry zero is not given", Options{u64(TopicOptMessageExpiry, 0)}, 1, nil},
		{"expiry zero string", Options{StringOption(TopicOptMessageExpiry, "0s")}, 1, nil},
		{"expiry zero wrong kind", Options{Uint32Option(TopicOptMessageExpiry, 0)}, 1, ErrInvalidOptionValue},
		{"expiry humantime", Options{StringOption(TopicOptMessageExpiry, "1h 30m")}, 1, nil},
		{"expiry none", Options{StringOption(TopicOptMessageExpiry, "none")}, 1, nil},
		{"expiry bad string", Options{StringOption(TopicOptMessageExpiry, "soon")}, 1, ErrInvalidOptionValue},
		{"expiry uint32 kind", Options{Uint32Option(TopicOptMessageExpiry, 1)}, 1, ErrInvalidOptionValue},
		{"expiry uint64 short", Options{{Key: TopicOptMessageExpiry, Kind: OptionKindUint64, Value: []byte{1, 2, 3, 4}}}, 1, ErrInvalidOptionValue},
		// max_topic_size
		{"max size 1 GiB", Options{u64(TopicOptMaxTopicSize, 1<<30)}, 1, nil},
		{"max size unlimited", Options{StringOption(TopicOptMaxTopicSize, "unlimited")}, 1, nil},
		{"max size zero", Options{u64(TopicOptMaxTopicSize, 0)}, 1, nil},
		{"max size below segment", Options{u64(TopicOptMaxTopicSize, 1<<29)}, 1, ErrInvalidTopicSize},
		{"max size equal to small segment", Options{u64(TopicOptMaxTopicSize, 1<<20), u64(TopicOptSegmentSize, 1<<20)}, 1, nil},
		{"max size string bad", Options{StringOption(TopicOptMaxTopicSize, "big")}, 1, ErrInvalidOptionValue},
		{"max size bool kind", Options{BoolOption(TopicOptMaxTopicSize, true)}, 1, ErrInvalidOptionValue},
		// segment_size
		{"segment 1 MiB", Options{u64(TopicOptSegmentSize, 1<<20)}, 1, nil},
		{"segment 1 GiB", Options{u64(TopicOptSegmentSize, 1<<30)}, 1, nil},
		{"segment 1 MiB + 512", Options{u64(TopicOptSegmentSize, 1<<20+512)}, 1, nil},
		{"segment below 1 MiB", Options{u64(TopicOptSegmentSize, 1<<20-512)}, 1, ErrInvalidOptionValue},
		{"segment above 1 GiB", Options{u64(TopicOptSegmentSize, 1<<30+512)}, 1, ErrInvalidOptionValue},
		{"segment not multiple of 512", Options{u64(TopicOptSegmentSize, 1<<20+1)}, 1, ErrInvalidOptionValue},
		{"segment zero is not given", Options{u64(TopicOptSegmentSize, 0)}, 1, nil},
		{"segment zero string", Options{StringOption(TopicOptSegmentSize, "0 B")}, 1, nil},
		{"segment string", Options{StringOption(TopicOptSegmentSize, "128MiB")}, 1, nil},
		{"segment string too small", Options{StringOption(TopicOptSegmentSize, "1000KB")}, 1, ErrInvalidOptionValue},
		// enforce_fsync
		{"fsync bool", Options{BoolOption(TopicOptEnforceFsync, true)}, 1, nil},
		{"fsync string false", Options{StringOption(TopicOptEnforceFsync, "false")}, 1, nil},
		{"fsync bool byte 2", Options{{Key: TopicOptEnforceFsync, Kind: OptionKindBool, Value: []byte{2}}}, 1, ErrInvalidOptionValue},
		{"fsync string yes", Options{StringOption(TopicOptEnforceFsync, "yes")}, 1, ErrInvalidOptionValue},
		{"fsync uint8 kind", Options{Uint8Option(TopicOptEnforceFsync, 1)}, 1, ErrInvalidOptionValue},
		// messages_required_to_save
		{"messages 1", Options{Uint32Option(TopicOptMessagesRequiredToSave, 1)}, 1, nil},
		{"messages max", Options{Uint32Option(TopicOptMessagesRequiredToSave, 16777216)}, 1, nil},
		{"messages 0", Options{Uint32Option(TopicOptMessagesRequiredToSave, 0)}, 1, ErrInvalidOptionValue},
		// durability, consumer_offset_durability (the published 0.11.0 keys)
		{"durability persisted", Options{StringOption(TopicOptDurability, "persisted")}, 1, nil},
		{"durability any case", Options{StringOption(TopicOptDurability, "Replicated")}, 1, nil},
		{"durability unknown value", Options{StringOption(TopicOptDurability, "fsync")}, 1, ErrInvalidOptionValue},
		{"durability as bool", Options{BoolOption(TopicOptDurability, true)}, 1, ErrInvalidOptionValue},
		{"durability agrees with enforce_fsync", Options{StringOption(TopicOptDurability, "persisted"), BoolOption(TopicOptEnforceFsync, true)}, 1, nil},
		{"durability contradicts enforce_fsync", Options{StringOption(TopicOptDurability, "replicated"), BoolOption(TopicOptEnforceFsync, true)}, 1, ErrInvalidOptionValue},
		{"consumer offset durability", Options{StringOption(TopicOptConsumerOffsetDurability, "PERSISTED")}, 1, nil},
		{"consumer offset durability bad", Options{StringOption(TopicOptConsumerOffsetDurability, "yes")}, 1, ErrInvalidOptionValue},
		{"messages 0 wrong kind", Options{u64(TopicOptMessagesRequiredToSave, 0)}, 1, ErrInvalidOptionValue},
		{"messages over max", Options{Uint32Option(TopicOptMessagesRequiredToSave, 16777217)}, 1, ErrInvalidOptionValue},
		{"messages string", Options{StringOption(TopicOptMessagesRequiredToSave, "100")}, 1, nil},
		{"messages string not a number", Options{StringOption(TopicOptMessagesRequiredToSave, "1e3")}, 1, ErrInvalidOptionValue},
		{"messages string over u32", Options{StringOption(TopicOptMessagesRequiredToSave, "4294967296")}, 1, ErrInvalidOptionValue},
		{"messages uint64 kind", Options{u64(TopicOptMessagesRequiredToSave, 1)}, 1, ErrInvalidOptionValue},
		// size_of_messages_required_to_save
		{"save size 0", Options{u64(TopicOptSizeOfMessagesRequiredToSave, 0)}, 1, nil},
		{"save size 1 GiB", Options{u64(TopicOptSizeOfMessagesRequiredToSave, 1<<30)}, 1, nil},
		{"save size over 1 GiB", Options{u64(TopicOptSizeOfMessagesRequiredToSave, 1<<30+1)}, 1, ErrInvalidOptionValue},
		{"save size string", Options{StringOption(TopicOptSizeOfMessagesRequiredToSave, "4 MB")}, 1, nil},
		// preallocate_segments
		{"prealloc 64 GiB", Options{BoolOption(TopicOptPreallocateSegments, true)}, 64, nil},
		{"prealloc over 64 GiB", Options{BoolOption(TopicOptPreallocateSegments, true)}, 65, ErrInvalidOptionValue},
		{"prealloc small segments", Options{BoolOption(TopicOptPreallocateSegments, true), u64(TopicOptSegmentSize, 1<<20)}, 1000, nil},
		{"prealloc off ignores cap", Options{BoolOption(TopicOptPreallocateSegments, false)}, 1000, nil},
		{"prealloc max partitions", Options{BoolOption(TopicOptPreallocateSegments, true)}, math.MaxUint32, ErrInvalidOptionValue},
		{"prealloc string", Options{StringOption(TopicOptPreallocateSegments, "TRUE")}, 1, nil},
		// local_retention_size, local_retention_age
		{"local size uint64", Options{u64(TopicOptLocalRetentionSize, 10<<30)}, 1, nil},
		{"local size zero", Options{u64(TopicOptLocalRetentionSize, 0)}, 1, nil},
		{"local size keep all", Options{u64(TopicOptLocalRetentionSize, LocalRetentionKeepAll)}, 1, nil},
		{"local size string", Options{StringOption(TopicOptLocalRetentionSize, "10 GiB")}, 1, nil},
		{"local size string unlimited", Options{StringOption(TopicOptLocalRetentionSize, "unlimited")}, 1, nil},
		{"local size string bad", Options{StringOption(TopicOptLocalRetentionSize, "lots")}, 1, ErrInvalidOptionValue},
		{"local size uint32 kind", Options{Uint32Option(TopicOptLocalRetentionSize, 1)}, 1, ErrInvalidOptionValue},
		{"local age uint64", Options{u64(TopicOptLocalRetentionAge, 3600000000)}, 1, nil},
		{"local age zero", Options{u64(TopicOptLocalRetentionAge, 0)}, 1, nil},
		{"local age string", Options{StringOption(TopicOptLocalRetentionAge, "2 days")}, 1, nil},
		{"local age string never", Options{StringOption(TopicOptLocalRetentionAge, "never")}, 1, nil},
		{"local age string bad", Options{StringOption(TopicOptLocalRetentionAge, "soon")}, 1, ErrInvalidOptionValue},
		{"local age bool kind", Options{BoolOption(TopicOptLocalRetentionAge, true)}, 1, ErrInvalidOptionValue},
		// keys
		{"unknown key", Options{StringOption("replicas", "3")}, 1, ErrUnsupportedOptionKey},
		{"replication factor", Options{Uint8Option(TopicOptReplicationFactor, 3)}, 1, nil},
		{"replication factor string", Options{StringOption(TopicOptReplicationFactor, "5")}, 1, nil},
		{"replication factor u32", Options{Uint32Option(TopicOptReplicationFactor, 2)}, 1, nil},
		{"replication factor too big", Options{Uint32Option(TopicOptReplicationFactor, 256)}, 1, ErrInvalidOptionValue},
		{"replication factor bool", Options{BoolOption(TopicOptReplicationFactor, true)}, 1, ErrInvalidOptionValue},
		{"unknown key wins over bad value", Options{Uint32Option(TopicOptMessagesRequiredToSave, 0), StringOption("x", "y")}, 1, ErrUnsupportedOptionKey},
		{"duplicate key", Options{BoolOption(TopicOptEnforceFsync, true), BoolOption(TopicOptEnforceFsync, false)}, 1, ErrInvalidCommand},
		{"too many pairs", manyOptions(MaxOptionPairs+1, 1), 1, ErrOptionsBlockTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewTopicOptions(tc.in, tc.partitions)
			if !sameErr(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if len(got.Explicit) != len(withoutUnset(tc.in)) || len(got.Explicit)+len(got.Derived) != len(topicCatalog) {
				t.Errorf("explicit %d, derived %d", len(got.Explicit), len(got.Derived))
			}
			// Explicit values are in the canonical kind and resolve again
			// to the same settings.
			for _, o := range got.Explicit {
				spec, _ := LookupOption(OptionScopeTopic, o.Key)
				if o.Kind != spec.Kind {
					t.Errorf("%s stored as %v, canonical %v", o.Key, o.Kind, spec.Kind)
				}
			}
			again, err := NewTopicOptions(got.Explicit, tc.partitions)
			if err != nil || again.Settings != got.Settings {
				t.Errorf("canonical block resolves to %+v, %v; want %+v", again.Settings, err, got.Settings)
			}
		})
	}
}

func TestValidateTopicUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Options
		want error
	}{
		{"empty", nil, nil},
		{"updatable keys", Options{StringOption(TopicOptCompressionAlgorithm, "gzip"), Uint64Option(TopicOptMessageExpiry, 1), Uint64Option(TopicOptMaxTopicSize, 1<<40)}, nil},
		{"create-only segment_size", Options{Uint64Option(TopicOptSegmentSize, 1<<20)}, ErrUnsupportedOptionKey},
		{"create-only enforce_fsync", Options{BoolOption(TopicOptEnforceFsync, true)}, ErrUnsupportedOptionKey},
		{"create-only messages_required_to_save", Options{Uint32Option(TopicOptMessagesRequiredToSave, 5)}, ErrUnsupportedOptionKey},
		{"create-only size_of_messages_required_to_save", Options{Uint64Option(TopicOptSizeOfMessagesRequiredToSave, 5)}, ErrUnsupportedOptionKey},
		{"create-only preallocate_segments", Options{BoolOption(TopicOptPreallocateSegments, false)}, ErrUnsupportedOptionKey},
		{"unknown key", Options{StringOption("nope", "x")}, ErrUnsupportedOptionKey},
		{"bad compression", Options{StringOption(TopicOptCompressionAlgorithm, "lz4")}, ErrInvalidOptionValue},
		{"bad expiry kind", Options{BoolOption(TopicOptMessageExpiry, true)}, ErrInvalidOptionValue},
		{"zero expiry and size", Options{Uint64Option(TopicOptMessageExpiry, 0), Uint64Option(TopicOptMaxTopicSize, 0)}, nil},
		{"local retention keys", Options{Uint64Option(TopicOptLocalRetentionSize, 1<<30), StringOption(TopicOptLocalRetentionAge, "1 day")}, nil},
		{"bad local retention size", Options{StringOption(TopicOptLocalRetentionSize, "big")}, ErrInvalidOptionValue},
		{"bad local retention age kind", Options{Uint8Option(TopicOptLocalRetentionAge, 1)}, ErrInvalidOptionValue},
		// Keys are checked before values: a create-only key is refused
		// even with a zero that would count as not given at create.
		{"create-only segment_size zero", Options{Uint64Option(TopicOptSegmentSize, 0)}, ErrUnsupportedOptionKey},
		{"structural", Options{StringOption(TopicOptMessageExpiry, "1s"), StringOption(TopicOptMessageExpiry, "2s")}, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ValidateTopicUpdate(tc.in); !sameErr(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTopicOptionsUpdate(t *testing.T) {
	base, err := NewTopicOptions(Options{Uint64Option(TopicOptSegmentSize, 1<<20), StringOption(TopicOptCompressionAlgorithm, "gzip")}, 1)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() TopicOptions {
		c := base
		c.Explicit = append(Options(nil), base.Explicit...)
		c.Derived = append(Options(nil), base.Derived...)
		return c
	}
	t.Run("patch", func(t *testing.T) {
		got := clone()
		upd := Options{StringOption(TopicOptMessageExpiry, "1s"), Uint8Option(TopicOptCompressionAlgorithm, 1)}
		if err := got.Update(upd); err != nil {
			t.Fatal(err)
		}
		wantSettings := base.Settings
		wantSettings.MessageExpiry = 1000000
		wantSettings.CompressionAlgorithm = CompressionNone
		if got.Settings != wantSettings {
			t.Errorf("settings = %+v, want %+v", got.Settings, wantSettings)
		}
		// Bytes stored as sent; message_expiry moved from derived to explicit.
		wantExplicit := Options{
			Uint8Option(TopicOptCompressionAlgorithm, 1),
			StringOption(TopicOptMessageExpiry, "1s"),
			Uint64Option(TopicOptSegmentSize, 1<<20),
		}
		if d := cmpDiff(wantExplicit, got.Explicit); d != "" {
			t.Errorf("explicit (-want +got):\n%s", d)
		}
		if _, ok := got.Derived.Get(TopicOptMessageExpiry); ok || len(got.Derived) != len(base.Derived)-1 {
			t.Errorf("derived = %+v", got.Derived)
		}
		// The update did not alias the caller's value bytes.
		upd[0].Value[0] = '9'
		if o, _ := got.Explicit.Get(TopicOptMessageExpiry); string(o.Value) != "1s" {
			t.Errorf("explicit value aliases the update: %q", o.Value)
		}
	})
	for _, tc := range []struct {
		name string
		in   Options
		want error
	}{
		{"max size below segment", Options{Uint64Option(TopicOptMaxTopicSize, 1<<19)}, ErrInvalidTopicSize},
		{"create-only key", Options{Uint64Option(TopicOptSegmentSize, 1<<21)}, ErrUnsupportedOptionKey},
		{"bad value after good", Options{Uint64Option(TopicOptMessageExpiry, 5), StringOption(TopicOptCompressionAlgorithm, "x")}, ErrInvalidOptionValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clone()
			if err := got.Update(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if d := cmpDiff(base, got); d != "" {
				t.Errorf("failed update changed the topic:\n%s", d)
			}
		})
	}
	t.Run("max size at segment", func(t *testing.T) {
		got := clone()
		if err := got.Update(Options{Uint64Option(TopicOptMaxTopicSize, 1<<20)}); err != nil {
			t.Errorf("got %v", err)
		}
	})
}

func TestParseExpiry(t *testing.T) {
	const s = 1000000
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"none", ExpiryNever, true},
		{"Unlimited", ExpiryNever, true},
		{"never_expire", ExpiryNever, true},
		{" never ", ExpiryNever, true},
		{"7 days", 7 * 86400 * s, true},
		{"7days", 7 * 86400 * s, true},
		{"1h 30m", 5400 * s, true},
		{"1h30m", 5400 * s, true},
		{"2 weeks 1 day", 15 * 86400 * s, true},
		{"1M", 2630016 * s, true},
		{"1y", 31557600 * s, true},
		{"250ms", 250000, true},
		{"5us", 5, true},
		{"5µs", 5, true},
		{"1500ns", 1, true},
		{"999ns", 0, true},
		{"0s", 0, true},
		{"1 second", s, true},
		{"3 mins", 180 * s, true},
		{"", 0, false},
		{"   ", 0, false},
		{"10", 0, false},
		{"1 fortnight", 0, false},
		{"h", 0, false},
		{"1h x", 0, false},
		{"-1s", 0, false},
		{"1.5h", 0, false},
		{"99999999999999999999s", 0, false},
		{"18446744073709551615s", 0, false},
		{"18446744073709551615us", math.MaxUint64, true},
		{"18446744073709551615us 1us", 0, false},
		{"18446744073709551615ns 18446744073709551615ns", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseExpiry(tc.in)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("parseExpiry(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"unlimited", SizeUnlimited, true},
		{"NONE", SizeUnlimited, true},
		{"1048576", 1 << 20, true},
		{"0", 0, true},
		{"1 GiB", 1 << 30, true},
		{"1GiB", 1 << 30, true},
		{"1 gib", 1 << 30, true},
		{"1 GB", 1000000000, true},
		{"128MiB", 128 << 20, true},
		{"1 KiB", 1024, true},
		{"1 KB", 1000, true},
		{"1k", 1000, true},
		{"1Ki", 1024, true},
		{"3 B", 3, true},
		{"2 TiB", 2 << 40, true},
		{"1 PB", 1e15, true},
		{"1 EiB", 1 << 60, true},
		{"1.5 GiB", 3 << 29, true},
		{"0.5KB", 500, true},
		{"1.123456789 GB", 1123456789, true},
		{"1.0000000001 GB", 0, false},
		{"16 EiB", 0, false},
		{"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false},
		{"18446744073709551615.9 B", math.MaxUint64, true},
		{"", 0, false},
		{"GiB", 0, false},
		{"1 ZiB", 0, false},
		{"1 MiBs", 0, false},
		{"1 bb", 0, false},
		{"1 i", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"-1", 0, false},
		{"1 G iB", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseByteSize(tc.in)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("parseByteSize(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTopicSettingsOptionsCoverCatalog(t *testing.T) {
	s := TopicSettings{CompressionAlgorithm: CompressionGzip, MessageExpiry: 1, MaxTopicSize: 1 << 21, SegmentSize: 1 << 20,
		EnforceFsync: true, MessagesRequiredToSave: 3, SizeOfMessagesRequiredToSave: 4, PreallocateSegments: true, ReplicationFactor: 3,
		LocalRetentionSize: 5, LocalRetentionAge: 6}
	got, err := NewTopicOptions(s.Options(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings != s || len(got.Derived) != 0 {
		t.Errorf("settings %+v → %+v (derived %d)", s, got.Settings, len(got.Derived))
	}
	for _, o := range s.Options() {
		if strings.TrimSpace(o.Key) == "" || len(o.Value) == 0 {
			t.Errorf("empty entry %+v", o)
		}
	}
}

func TestTopicOptionsSharingAndFillTopic(t *testing.T) {
	base, err := NewTopicOptions(Options{StringOption(TopicOptCompressionAlgorithm, "gzip")}, 1)
	if err != nil {
		t.Fatal(err)
	}
	derived := append(Options(nil), base.Derived...)
	shared := base // shares the Explicit and Derived backing arrays
	if err := shared.Update(Options{Uint64Option(TopicOptMessageExpiry, 5)}); err != nil {
		t.Fatal(err)
	}
	if d := cmpDiff(derived, base.Derived); d != "" {
		t.Errorf("Update changed a slice shared with the original:\n%s", d)
	}
	var h Topic
	shared.FillTopic(&h)
	want := Topic{
		MessageExpiry: 5, CompressionAlgorithm: CompressionGzip, MaxTopicSize: SizeUnlimited,
		Options:        Options{StringOption(TopicOptCompressionAlgorithm, "gzip"), Uint64Option(TopicOptMessageExpiry, 5)},
		DerivedOptions: shared.Derived,
	}
	if d := cmpDiff(want, h); d != "" {
		t.Errorf("FillTopic (-want +got):\n%s", d)
	}
	if _, ok := h.DerivedOptions.Get(TopicOptMessageExpiry); ok || len(h.DerivedOptions) != len(topicCatalog)-2 {
		t.Errorf("derived = %+v", h.DerivedOptions)
	}
}

// TestZeroMeansUnset pins the explicit-zero rule of every catalog key
// (UnsetByZero): a numeric key given as 0 resolves exactly as if absent on
// create (default derived, nothing explicit) and leaves the setting
// unchanged on update; a boolean false and compression code 0 are not
// "unset".
func TestZeroMeansUnset(t *testing.T) {
	def, err := NewTopicOptions(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opt   Option
		unset bool
		err   error // create result when not unset
	}{
		{Uint64Option(TopicOptMessageExpiry, 0), true, nil},
		{StringOption(TopicOptMessageExpiry, "0 s"), true, nil},
		{Uint64Option(TopicOptMaxTopicSize, 0), true, nil},
		{StringOption(TopicOptMaxTopicSize, "0"), true, nil},
		{Uint64Option(TopicOptSegmentSize, 0), true, nil},
		{StringOption(TopicOptSegmentSize, "0 MiB"), true, nil},
		{Uint32Option(TopicOptMessagesRequiredToSave, 0), false, ErrInvalidOptionValue},
		{StringOption(TopicOptMessagesRequiredToSave, "0"), false, ErrInvalidOptionValue},
		{StringOption(TopicOptDurability, "replicated"), false, nil},
		{Uint64Option(TopicOptSizeOfMessagesRequiredToSave, 0), true, nil},
		{Uint64Option(TopicOptLocalRetentionSize, 0), false, nil},
		{StringOption(TopicOptLocalRetentionSize, "0 B"), false, nil},
		{Uint64Option(TopicOptLocalRetentionAge, 0), false, nil},
		{StringOption(TopicOptLocalRetentionAge, "0s"), false, nil},
		{BoolOption(TopicOptEnforceFsync, false), false, nil},
		{BoolOption(TopicOptPreallocateSegments, false), false, nil},
		{Uint8Option(TopicOptCompressionAlgorithm, 0), false, ErrInvalidOptionValue},
		{Uint64Option(TopicOptSegmentSize, 1<<20), false, nil},
		{Uint32Option(TopicOptMessageExpiry, 0), false, ErrInvalidOptionValue},
	} {
		t.Run(tc.opt.Key+"/"+string(tc.opt.Value), func(t *testing.T) {
			if got := UnsetByZero(tc.opt); got != tc.unset {
				t.Fatalf("UnsetByZero = %v, want %v", got, tc.unset)
			}
			got, err := NewTopicOptions(Options{tc.opt}, 1)
			if !sameErr(err, tc.err) {
				t.Fatalf("create: %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			_, explicit := got.Explicit.Get(tc.opt.Key)
			if explicit == tc.unset {
				t.Errorf("explicit block holds the key: %v, want %v", explicit, !tc.unset)
			}
			if tc.unset {
				if d := cmpDiff(def, got); d != "" {
					t.Errorf("an explicit zero resolves differently from an absent key (-absent +zero):\n%s", d)
				}
				d, ok := got.Derived.Get(tc.opt.Key)
				spec, _ := LookupOption(OptionScopeTopic, tc.opt.Key)
				if !ok || !bytes.Equal(d.Value, spec.Default) {
					t.Errorf("derived %s = %x, %v; want the default %x", tc.opt.Key, d.Value, ok, spec.Default)
				}
			}
		})
	}
	t.Run("update keeps the value", func(t *testing.T) {
		base, err := NewTopicOptions(Options{Uint64Option(TopicOptMessageExpiry, 5), Uint64Option(TopicOptMaxTopicSize, 1<<40)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := base
		got.Explicit = append(Options(nil), base.Explicit...)
		got.Derived = append(Options(nil), base.Derived...)
		if err := got.Update(Options{Uint64Option(TopicOptMessageExpiry, 0), Uint64Option(TopicOptMaxTopicSize, 0)}); err != nil {
			t.Fatal(err)
		}
		if d := cmpDiff(base, got); d != "" {
			t.Errorf("a zero update changed the topic (-before +after):\n%s", d)
		}
	})
}

// TestLocalRetentionOptions: the two tiered-storage keys resolve from
// their numeric and string forms, are described, and are updatable; an
// update with 0 returns the topic to the server's setting (0 is a real
// value for them, not "not given").
func TestLocalRetentionOptions(t *testing.T) {
	for _, key := range []string{TopicOptLocalRetentionSize, TopicOptLocalRetentionAge} {
		spec, ok := LookupOption(OptionScopeTopic, key)
		if !ok || !spec.Updatable || spec.Kind != OptionKindUint64 || !bytes.Equal(spec.Default, make([]byte, 8)) ||
			!strings.Contains(spec.Description, "tiered_storage."+key) {
			t.Errorf("catalog entry %+v, %v", spec, ok)
		}
		found := false
		for _, d := range DescribeCatalog(OptionScopeTopic) {
			found = found || (d.Key == key && d.Kind == OptionKindUint64 && bytes.Equal(d.Default, spec.Default))
		}
		if !found {
			t.Errorf("DESCRIBE_OPTIONS lacks %s", key)
		}
	}

	got, err := NewTopicOptions(Options{StringOption(TopicOptLocalRetentionSize, "10 GiB"), StringOption(TopicOptLocalRetentionAge, "2 days")}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings.LocalRetentionSize != 10<<30 || got.Settings.LocalRetentionAge != 2*24*3600*1_000_000 {
		t.Fatalf("settings %+v", got.Settings)
	}
	wantExplicit := Options{Uint64Option(TopicOptLocalRetentionAge, 2*24*3600*1_000_000), Uint64Option(TopicOptLocalRetentionSize, 10<<30)}
	if d := cmpDiff(wantExplicit, got.Explicit); d != "" {
		t.Errorf("explicit (-want +got):\n%s", d)
	}
	// The topic header round trip keeps both keys in the option blocks.
	var h Topic
	got.FillTopic(&h)
	if o, ok := h.Options.Get(TopicOptLocalRetentionSize); !ok || !bytes.Equal(o.Value, u64Bytes(10<<30)) {
		t.Errorf("header options %+v", h.Options)
	}

	for _, tc := range []struct {
		name     string
		upd      Options
		wantSize uint64
		wantAge  uint64
	}{
		{"keep all, no age rule", Options{StringOption(TopicOptLocalRetentionSize, "unlimited"), StringOption(TopicOptLocalRetentionAge, "never")}, LocalRetentionKeepAll, LocalRetentionNoAge},
		{"numeric", Options{Uint64Option(TopicOptLocalRetentionSize, 1), Uint64Option(TopicOptLocalRetentionAge, 2)}, 1, 2},
		{"zero is the server's setting", Options{Uint64Option(TopicOptLocalRetentionSize, 0), StringOption(TopicOptLocalRetentionAge, "0s")}, 0, 0},
		{"one key keeps the other", Options{Uint64Option(TopicOptLocalRetentionSize, 7)}, 7, 2 * 24 * 3600 * 1_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := got
			if err := u.Update(tc.upd); err != nil {
				t.Fatal(err)
			}
			if u.Settings.LocalRetentionSize != tc.wantSize || u.Settings.LocalRetentionAge != tc.wantAge {
				t.Fatalf("after update %+v", u.Settings)
			}
			for _, o := range tc.upd {
				if e, ok := u.Explicit.Get(o.Key); !ok || !bytes.Equal(e.Value, o.Value) {
					t.Errorf("explicit %s = %+v, %v", o.Key, e, ok)
				}
			}
			if len(u.Explicit)+len(u.Derived) != len(topicCatalog) {
				t.Errorf("explicit %d + derived %d", len(u.Explicit), len(u.Derived))
			}
		})
	}
	if err := ValidateTopicUpdate(Options{StringOption(TopicOptLocalRetentionAge, "soon")}); !errors.Is(err, ErrInvalidOptionValue) {
		t.Errorf("bad age update: %v", err)
	}
}

// TestCompleteDerived: a topic whose blocks predate catalog keys gets
// them in Derived with their setting, sorted, without touching a
// shared slice; a complete topic is left as it is.
func TestCompleteDerived(t *testing.T) {
	full, err := NewTopicOptions(Options{Uint64Option(TopicOptLocalRetentionSize, 9)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	old := full
	old.Derived = removeOption(append(Options(nil), full.Derived...), TopicOptLocalRetentionAge)
	old.Settings.LocalRetentionAge = 0
	shared := old.Derived
	old.CompleteDerived()
	if d := cmpDiff(full, old); d != "" {
		t.Errorf("completed (-want +got):\n%s", d)
	}
	if _, ok := shared.Get(TopicOptLocalRetentionAge); ok || len(shared) != len(full.Derived)-1 {
		t.Errorf("CompleteDerived changed the shared slice: %+v", shared)
	}
	again := full
	again.CompleteDerived()
	if d := cmpDiff(full, again); d != "" {
		t.Errorf("a complete topic changed:\n%s", d)
	}
}
