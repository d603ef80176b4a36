package metadata

import (
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// TestLimits: the id-space limits of semantics.md §3.1 are committed
// rejections that change nothing.
func TestLimits(t *testing.T) {
	cmdEntry := func(code wire.Command, b wire.Body) *Entry {
		return &Entry{Op: 99, Kind: KindCommand, Code: code, Body: b.AppendTo(nil)}
	}
	t.Run("too many streams", func(t *testing.T) {
		s := newState()
		for i := range uint32(MaxStreams) {
			s.streams[i] = nil
		}
		if r := s.applyCommand(cmdEntry(wire.CmdCreateStream, &wire.CreateStream{Name: "x"})); r.code != wire.ErrTooManyStreams.Code {
			t.Fatalf("code %d", r.code)
		}
		if _, ok := s.streamByName["x"]; ok {
			t.Fatal("stream added")
		}
	})
	t.Run("too many topics", func(t *testing.T) {
		s := newState()
		s.applyCommand(cmdEntry(wire.CmdCreateStream, &wire.CreateStream{Name: "s"}))
		st := s.streams[0]
		for i := range uint32(MaxTopicsPerStream) {
			st.Topics[i] = nil
		}
		if r := s.applyCommand(cmdEntry(wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), Name: "t"})); r.code != wire.ErrTooManyTopics.Code {
			t.Fatalf("code %d", r.code)
		}
	})
	t.Run("partition id space", func(t *testing.T) {
		s := newState()
		s.applyCommand(cmdEntry(wire.CmdCreateStream, &wire.CreateStream{Name: "s"}))
		s.applyCommand(cmdEntry(wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), Name: "t"}))
		tp := s.streams[0].Topics[0]
		tp.Partitions = make([]partition, MaxPartitionID-10)
		for i := range tp.Partitions {
			tp.Partitions[i].ID = uint32(i)
		}
		r := s.applyCommand(cmdEntry(wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), PartitionsCount: 11}))
		if r.code != wire.ErrPartitionIDSpaceExhausted.Code || len(tp.Partitions) != MaxPartitionID-10 {
			t.Fatalf("code %d, %d partitions", r.code, len(tp.Partitions))
		}
		r = s.applyCommand(cmdEntry(wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), PartitionsCount: 10}))
		if r.code != 0 || len(tp.Partitions) != MaxPartitionID {
			t.Fatalf("code %d, %d partitions", r.code, len(tp.Partitions))
		}
	})
	t.Run("pat expiry", func(t *testing.T) {
		for _, tc := range []struct {
			now, v, at uint64
			ok         bool
		}{
			{100, 0, 0, true}, {100, ^uint64(0), 0, true}, {100, 5, 105, true}, {100, ^uint64(0) - 50, 0, false},
		} {
			at, ok := patExpiry(tc.now, tc.v)
			if at != tc.at || ok != tc.ok {
				t.Errorf("patExpiry(%d, %d) = %d, %v", tc.now, tc.v, at, ok)
			}
		}
	})
}
