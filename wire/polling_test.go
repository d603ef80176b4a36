package wire

import (
	"errors"
	"testing"
)

func TestPollingStrategyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    PollingStrategy
		wire string
	}{
		{"offset 1000", OffsetStrategy(1000), "01e803000000000000"},
		{"timestamp", TimestampStrategy(1700000000123456), "024022201824" + "0a0600"},
		{"first", FirstStrategy(), "030000000000000000"},
		{"last", LastStrategy(), "040000000000000000"},
		{"next", NextStrategy(), "050000000000000000"},
		{"next with value kept", PollingStrategy{Kind: PollNext, Value: 7}, "050700000000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.Validate(); err != nil {
				t.Fatal(err)
			}
			s := tc.s
			checkBody(t, mustHex(t, tc.wire), &s, &PollingStrategy{})
		})
	}
}

func TestPollingStrategyErrors(t *testing.T) {
	for _, tc := range []struct{ name, wire string }{
		{"empty", ""},
		{"kind 0", "000000000000000000"},
		{"kind 6", "060000000000000000"},
		{"short", "0100000000000000"},
		{"trailing", "01000000000000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s PollingStrategy
			if err := s.Decode(mustHex(t, tc.wire)); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
	if err := (PollingStrategy{Kind: 0}).Validate(); err == nil {
		t.Errorf("kind 0 validates")
	}
	names := map[PollingKind]string{PollOffset: "Offset", PollTimestamp: "Timestamp", PollFirst: "First", PollLast: "Last", PollNext: "Next", 6: "PollingKind(6)"}
	for k, s := range names {
		if k.String() != s {
			t.Errorf("%d.String() = %s", k, k.String())
		}
	}
}
