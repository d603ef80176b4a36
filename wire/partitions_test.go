package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestPartitionsRoundTrip(t *testing.T) {
	runRoundTrips(t, []roundTripCase{
		{name: "create partitions", in: &CreatePartitions{StreamID: NumericID(1), TopicID: NumericID(2), PartitionsCount: 4}, fresh: func() Body { return &CreatePartitions{} }, strict: true},
		{name: "create partitions named", in: &CreatePartitions{StreamID: NamedID("s"), TopicID: NamedID(longName), PartitionsCount: 1000}, fresh: func() Body { return &CreatePartitions{} }, strict: true},
		{name: "delete partitions", in: &DeletePartitions{StreamID: NumericID(1), TopicID: NamedID("t"), PartitionsCount: 1}, fresh: func() Body { return &DeletePartitions{} }, strict: true},
		{name: "delete segments", in: &DeleteSegments{StreamID: NumericID(1), TopicID: NumericID(2), PartitionID: 999999, SegmentsCount: 0xffffffff}, fresh: func() Body { return &DeleteSegments{} }, strict: true},
		{name: "partition info", in: ptr(samplePartition(7)), fresh: func() Body { return &PartitionInfo{} }, strict: true},
		{name: "partition info zero", in: &PartitionInfo{}, fresh: func() Body { return &PartitionInfo{} }, strict: true},
	})
}

// TestPartitionInfoLayout pins the 40-byte PartitionInfo of commands.md.
func TestPartitionInfoLayout(t *testing.T) {
	p := PartitionInfo{ID: 1, CreatedAt: 2, SegmentsCount: 3, CurrentOffset: 4, SizeBytes: 5, MessagesCount: 6}
	want := cat(appendU32(nil, 1), appendU64(nil, 2), appendU32(nil, 3), appendU64(nil, 4), appendU64(nil, 5), appendU64(nil, 6))
	got := p.AppendTo(nil)
	if len(got) != PartitionInfoLen || !bytes.Equal(got, want) {
		t.Errorf("got %x\nwant %x", got, want)
	}
}

// TestDeleteSegmentsLayout pins DELETE_SEGMENTS's field order.
func TestDeleteSegmentsLayout(t *testing.T) {
	d := DeleteSegments{StreamID: NumericID(1), TopicID: NumericID(2), PartitionID: 3, SegmentsCount: 4}
	want := cat(NumericID(1).AppendTo(nil), NumericID(2).AppendTo(nil), appendU32(nil, 3), appendU32(nil, 4))
	if got := d.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("got %x\nwant %x", got, want)
	}
}

func TestPartitionsDecodeErrors(t *testing.T) {
	ids := cat(NumericID(1).AppendTo(nil), NumericID(2).AppendTo(nil))
	for _, tc := range []struct {
		name  string
		fresh Body
		in    []byte
	}{
		{"create no count", &CreatePartitions{}, ids},
		{"create short count", &CreatePartitions{}, cat(ids, []byte{1, 0})},
		{"create bad topic id", &CreatePartitions{}, cat(NumericID(1).AppendTo(nil), []byte{1, 3, 0, 0, 0}, appendU32(nil, 1))},
		{"delete no count", &DeletePartitions{}, ids},
		{"segments missing count", &DeleteSegments{}, cat(ids, appendU32(nil, 0))},
		{"partition short", &PartitionInfo{}, make([]byte, PartitionInfoLen-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fresh.Decode(tc.in); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v, want %v", err, ErrInvalidCommand)
			}
		})
	}
}

func TestPartitionsValidate(t *testing.T) {
	s, tp := NumericID(1), NamedID("t")
	for _, tc := range []struct {
		name string
		v    interface{ Validate() error }
		want error
	}{
		{"create 1", &CreatePartitions{StreamID: s, TopicID: tp, PartitionsCount: 1}, nil},
		{"create 1000", &CreatePartitions{StreamID: s, TopicID: tp, PartitionsCount: 1000}, nil},
		{"create 0", &CreatePartitions{StreamID: s, TopicID: tp}, ErrTooManyPartitions},
		{"create 1001", &CreatePartitions{StreamID: s, TopicID: tp, PartitionsCount: 1001}, ErrTooManyPartitions},
		{"create bad id", &CreatePartitions{StreamID: s, PartitionsCount: 1}, ErrInvalidIdentifier},
		{"delete 1", &DeletePartitions{StreamID: s, TopicID: tp, PartitionsCount: 1}, nil},
		{"delete 0", &DeletePartitions{StreamID: s, TopicID: tp}, ErrTooManyPartitions},
		{"delete 1001", &DeletePartitions{StreamID: s, TopicID: tp, PartitionsCount: 1001}, ErrTooManyPartitions},
		{"delete bad id", &DeletePartitions{TopicID: tp, PartitionsCount: 1}, ErrInvalidIdentifier},
		{"segments ok", &DeleteSegments{StreamID: s, TopicID: tp}, nil},
		{"segments bad id", &DeleteSegments{StreamID: s, TopicID: NamedID("")}, ErrInvalidIdentifier},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.v.Validate(); !sameErr(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}
