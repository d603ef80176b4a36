package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestConsumerRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Consumer
		wire string
	}{
		{"consumer 9", SingleConsumer(NumericID(9)), "01010409000000"},
		{"group named", GroupConsumer(NamedID("g1")), "0202026731"},
		{"consumer named", SingleConsumer(NamedID("worker")), "010206776f726b6572"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if tc.c.EncodedLen() != len(tc.wire)/2 {
				t.Errorf("EncodedLen %d", tc.c.EncodedLen())
			}
			c := tc.c
			checkBody(t, mustHex(t, tc.wire), &c, &Consumer{})
		})
	}
}

func TestConsumerErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire string
	}{
		{"empty", ""},
		{"kind 0", "00010409000000"},
		{"kind 3", "03010409000000"},
		{"bad identifier kind", "01030409000000"},
		{"numeric length 3", "010103090000"},
		{"empty name", "010200"},
		{"short", "010104090000"},
		{"trailing", "0101040900000000"},
		{"non utf8 name", "010201ff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Consumer
			if err := c.Decode(mustHex(t, tc.wire)); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v, want InvalidCommand", err)
			}
		})
	}
	if err := (Consumer{Kind: 7, ID: NumericID(1)}).Validate(); err == nil {
		t.Errorf("kind 7 validates")
	}
	if err := SingleConsumer(NamedID("")).Validate(); err == nil {
		t.Errorf("empty name validates")
	}
	if ConsumerSingle.String() != "Consumer" || ConsumerGroupKind.String() != "ConsumerGroup" || ConsumerKind(9).String() != "ConsumerKind(9)" {
		t.Errorf("String")
	}
}

func TestOptPartition(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    OptPartition
		wire string
	}{
		{"absent", OptPartition{}, "0000000000"},
		{"partition 0", SomePartition(0), "0100000000"},
		{"partition 3", SomePartition(3), "0103000000"},
		{"max", SomePartition(0xffffffff), "01ffffffff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			checkBody(t, mustHex(t, tc.wire), &p, &OptPartition{})
		})
	}
	t.Run("absent ignores value", func(t *testing.T) {
		if got := (OptPartition{ID: 7}).AppendTo(nil); !bytes.Equal(got, make([]byte, 5)) {
			t.Errorf("absent with ID encodes %x", got)
		}
		var p OptPartition
		if err := p.Decode(mustHex(t, "0007000000")); err != nil || p != (OptPartition{}) {
			t.Errorf("decode = %+v, %v", p, err)
		}
	})
	for _, tc := range []struct{ name, wire string }{
		{"flag 2", "0200000000"},
		{"flag ff", "ff01000000"},
		{"short", "01000000"},
		{"long", "010000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p OptPartition
			if err := p.Decode(mustHex(t, tc.wire)); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
}
