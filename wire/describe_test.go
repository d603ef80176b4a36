package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestDescribeRoundTrip(t *testing.T) {
	topic := DescribeCatalog(OptionScopeTopic)
	runRoundTrips(t, []roundTripCase{
		{name: "scope topic", in: &DescribeOptions{Scope: OptionScopeTopic}, fresh: func() Body { return &DescribeOptions{} }, strict: true},
		{name: "scope stream", in: &DescribeOptions{Scope: OptionScopeStream}, fresh: func() Body { return &DescribeOptions{} }, strict: true},
		{name: "scope user", in: &DescribeOptions{Scope: OptionScopeUser}, fresh: func() Body { return &DescribeOptions{} }, strict: true},
		{name: "empty catalog", in: &OptionDescriptions{}, fresh: func() Body { return &OptionDescriptions{} }, strict: true},
		{name: "topic catalog", in: &topic, fresh: func() Body { return &OptionDescriptions{} }, strict: true},
		{name: "no default no description", in: &OptionDescriptions{{Key: "k", Kind: 99}}, fresh: func() Body { return &OptionDescriptions{} }, strict: true},
		{name: "long fields", in: &OptionDescriptions{{Key: longName, Kind: OptionKindRaw, Default: bytes.Repeat([]byte{7}, 255), Description: strings.Repeat("d", 1000)}}, fresh: func() Body { return &OptionDescriptions{} }, strict: true},
	})
}

func TestDescribeOptionsDecodeErrors(t *testing.T) {
	entry := OptionDescriptions{{Key: "k", Kind: OptionKindBool, Default: []byte{0}, Description: "d"}}
	enc := entry.AppendTo(nil)
	for _, tc := range []struct {
		name  string
		fresh Body
		in    []byte
	}{
		{"scope 0", &DescribeOptions{}, []byte{0}},
		{"scope 4", &DescribeOptions{}, []byte{4}},
		{"scope missing", &DescribeOptions{}, nil},
		{"reply no count", &OptionDescriptions{}, nil},
		{"reply count too high", &OptionDescriptions{}, cat(appendU32(nil, 2), enc[4:])},
		{"reply huge count", &OptionDescriptions{}, cat(appendU32(nil, 0xffffffff), enc[4:])},
		{"reply kind zero", &OptionDescriptions{}, cat(appendU32(nil, 1), []byte{1, 'k', 0}, appendU32(nil, 0), appendU32(nil, 0))},
		{"reply empty key", &OptionDescriptions{}, cat(appendU32(nil, 1), []byte{0, 3}, appendU32(nil, 0), appendU32(nil, 0))},
		{"reply default too long", &OptionDescriptions{}, cat(appendU32(nil, 1), []byte{1, 'k', 1}, appendU32(nil, 256), make([]byte, 256), appendU32(nil, 0))},
		{"reply default past end", &OptionDescriptions{}, cat(appendU32(nil, 1), []byte{1, 'k', 1}, appendU32(nil, 9), appendU32(nil, 0))},
		{"reply description too long", &OptionDescriptions{}, cat(appendU32(nil, 1), []byte{1, 'k', 1}, appendU32(nil, 0), appendU32(nil, MaxOptionDescriptionBytes+1), make([]byte, MaxOptionDescriptionBytes+1))},
		{"reply description not utf-8", &OptionDescriptions{}, cat(appendU32(nil, 1), []byte{1, 'k', 1}, appendU32(nil, 0), appendU32(nil, 1), []byte{0xff})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fresh.Decode(tc.in); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v, want %v", err, ErrInvalidCommand)
			}
		})
	}
}

// TestDescribeLayout pins the entry layout against commands.md §13.
func TestDescribeLayout(t *testing.T) {
	d := OptionDescriptions{{Key: "enforce_fsync", Kind: OptionKindBool, Default: []byte{0}, Description: "fsync"}}
	want := cat(appendU32(nil, 1), []byte("\x0denforce_fsync\x03"), appendU32(nil, 1), []byte{0}, appendU32(nil, 5), []byte("fsync"))
	if got := d.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("got %x\nwant %x", got, want)
	}
}
