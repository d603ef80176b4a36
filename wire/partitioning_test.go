package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestPartitioningRoundTrip(t *testing.T) {
	key255 := bytes.Repeat([]byte{'k'}, MaxMessageKeyLen)
	for _, tc := range []struct {
		name string
		p    Partitioning
		wire []byte
	}{
		{"balanced", BalancedPartitioning(), []byte{1, 0}},
		{"partition 0", PartitioningByID(0), []byte{2, 4, 0, 0, 0, 0}},
		{"partition 513", PartitioningByID(513), []byte{2, 4, 1, 2, 0, 0}},
		{"key 1 byte", PartitioningByKey([]byte{0}), []byte{3, 1, 0}},
		{"key 255 bytes", PartitioningByKey(key255), append([]byte{3, 255}, key255...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if tc.p.EncodedLen() != len(tc.wire) {
				t.Errorf("EncodedLen %d, want %d", tc.p.EncodedLen(), len(tc.wire))
			}
			p := tc.p
			checkBody(t, tc.wire, &p, &Partitioning{})
		})
	}
}

func TestPartitioningKeyAliases(t *testing.T) {
	src := []byte{3, 2, 'a', 'b'}
	var p Partitioning
	if err := p.Decode(src); err != nil {
		t.Fatal(err)
	}
	if &p.Key[0] != &src[2] {
		t.Errorf("key was copied")
	}
}

func TestPartitioningErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire []byte
	}{
		{"empty", nil},
		{"kind only", []byte{1}},
		{"balanced with value", []byte{1, 1, 0}},
		{"partition id length 3", []byte{2, 3, 0, 0, 0}},
		{"partition id length 5", []byte{2, 5, 0, 0, 0, 0, 0}},
		{"partition id short", []byte{2, 4, 0, 0}},
		{"empty key", []byte{3, 0}},
		{"key short", []byte{3, 3, 'a'}},
		{"kind 0", []byte{0, 0}},
		{"kind 4", []byte{4, 0}},
		{"trailing", []byte{1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Partitioning
			if err := p.Decode(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		p    Partitioning
		want error
	}{
		{"empty key", PartitioningByKey(nil), ErrInvalidKeyValueLength},
		{"key 256", PartitioningByKey(make([]byte, 256)), ErrInvalidKeyValueLength},
		{"unknown kind", Partitioning{Kind: 9}, ErrInvalidCommand},
	} {
		t.Run("validate "+tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); !errors.Is(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
	// Oversized keys are truncated so the output still decodes.
	long := PartitioningByKey(make([]byte, 300))
	var p Partitioning
	if err := p.Decode(long.AppendTo(nil)); err != nil || len(p.Key) != MaxMessageKeyLen || long.EncodedLen() != 257 {
		t.Errorf("truncated key: %v, %d", err, len(p.Key))
	}
	for k, s := range map[PartitioningKind]string{PartitionBalanced: "Balanced", PartitionByID: "PartitionId", PartitionByKey: "MessagesKey", 7: "PartitioningKind(7)"} {
		if k.String() != s {
			t.Errorf("%d.String() = %s", k, k.String())
		}
	}
}
