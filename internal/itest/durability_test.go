package itest

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/wire"
)

// TestDurabilityOptions: the published 0.11.0 SDKs send durability and
// consumer_offset_durability ("replicated" or "persisted") on every
// CREATE_TOPIC. Iggo accepts them, treats durability as enforce_fsync,
// reports both blocks consistently, and keeps the settings across a
// restart from the journal and from a snapshot.
func TestDurabilityOptions(t *testing.T) {
	for _, every := range []int{1 << 20, 2} { // journal replay only; snapshots + tail
		t.Run("snapshot every "+strconv.Itoa(every), func(t *testing.T) {
			dir := t.TempDir()
			s1 := Start(t, WithDir(dir), WithBrokerOptions(broker.WithSnapshotEvery(every)))
			c := s1.Dial(t)
			c.LoginRoot()
			st := mkStream(t, c, "dur")
			// What the Rust SDK 0.11.0 sends with nothing else set.
			mkTopic(t, c, st, "sdk-default", 3, wire.Options{
				wire.StringOption(wire.TopicOptConsumerOffsetDurability, "replicated"),
				wire.StringOption(wire.TopicOptDurability, "replicated"),
			})
			mkTopic(t, c, st, "persisted", 1, wire.Options{
				wire.StringOption(wire.TopicOptConsumerOffsetDurability, "Persisted"),
				wire.StringOption(wire.TopicOptDurability, "PERSISTED"),
			})
			mkTopic(t, c, st, "legacy-key", 1, wire.Options{wire.BoolOption(wire.TopicOptEnforceFsync, true)})
			for _, bad := range []wire.Options{
				{wire.StringOption(wire.TopicOptDurability, "always")},
				{wire.BoolOption(wire.TopicOptDurability, true)},
				{wire.StringOption(wire.TopicOptDurability, "replicated"), wire.BoolOption(wire.TopicOptEnforceFsync, true)},
			} {
				f := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: sid(st), PartitionsCount: 1, Name: "bad", Options: bad})
				ExpectStatus(t, f, wire.ErrInvalidOptionValue.Code)
			}
			upd := wire.UpdateTopic{StreamID: sid(st), TopicID: name("persisted"), Name: "persisted", Options: wire.Options{wire.StringOption(wire.TopicOptDurability, "replicated")}}
			ExpectStatus(t, c.Command(wire.OpUpdateTopic, &upd), wire.ErrUnsupportedOptionKey.Code)

			check := func(c *Client, when string) {
				t.Helper()
				for _, tc := range []struct {
					topic                  string
					fsync, offsetsPersist  bool
					explicitDurability     string // "" = not explicit
					explicitOffsetDurabile string
				}{
					{"sdk-default", false, false, "replicated", "replicated"},
					{"persisted", true, true, "persisted", "persisted"},
					{"legacy-key", true, false, "", ""},
				} {
					td := getTopic(t, c, sid(st), name(tc.topic))
					all := append(append(wire.Options(nil), td.Topic.Options...), td.DerivedOptions...)
					val := func(key string) []byte {
						o, ok := all.Get(key)
						if !ok {
							t.Errorf("%s: %s: %s in neither block", when, tc.topic, key)
						}
						return o.Value
					}
					wantDur := []byte(wire.DurabilityReplicated)
					if tc.fsync {
						wantDur = []byte(wire.DurabilityPersisted)
					}
					if got := val(wire.TopicOptDurability); !bytes.Equal(got, wantDur) {
						t.Errorf("%s: %s: durability %q, want %q", when, tc.topic, got, wantDur)
					}
					if got := val(wire.TopicOptEnforceFsync); !bytes.Equal(got, []byte{b2u(tc.fsync)}) {
						t.Errorf("%s: %s: enforce_fsync %x, want %v", when, tc.topic, got, tc.fsync)
					}
					wantOff := []byte(wire.DurabilityReplicated)
					if tc.offsetsPersist {
						wantOff = []byte(wire.DurabilityPersisted)
					}
					if got := val(wire.TopicOptConsumerOffsetDurability); !bytes.Equal(got, wantOff) {
						t.Errorf("%s: %s: consumer_offset_durability %q, want %q", when, tc.topic, got, wantOff)
					}
					if o, ok := td.Topic.Options.Get(wire.TopicOptDurability); ok != (tc.explicitDurability != "") {
						t.Errorf("%s: %s: durability explicit = %v (%q)", when, tc.topic, ok, o.Value)
					}
				}
			}
			check(c, "before restart")
			s1.Stop()
			s2 := Start(t, WithDir(dir))
			c2 := s2.Dial(t)
			c2.LoginRoot()
			check(c2, "after restart")
		})
	}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
