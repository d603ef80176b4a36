package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// hardStateRecord is the payload of the hardstate and commit files: a
// sequence number (which of the two files is newer), whether a HardState
// was stored at all, and the HardState protobuf.
type hardStateRecord struct {
	seq uint64
	hs  *pb.HardState // nil when SetHardState(nil) was the last call
}

func encodeHardState(r hardStateRecord) ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, r.seq)
	if r.hs == nil {
		return append(b, 0), nil
	}
	b = append(b, 1)
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, r.hs)
	if err != nil {
		return nil, fmt.Errorf("encode hard state: %w", err)
	}
	return b, nil
}

func decodeHardState(b []byte) (hardStateRecord, error) {
	if len(b) < 9 {
		return hardStateRecord{}, fmt.Errorf("hard state record of %d bytes: %w", len(b), errCorrupt)
	}
	r := hardStateRecord{seq: binary.LittleEndian.Uint64(b)}
	switch b[8] {
	case 0:
		return r, nil
	case 1:
		r.hs = &pb.HardState{}
		if err := proto.Unmarshal(b[9:], r.hs); err != nil {
			return hardStateRecord{}, fmt.Errorf("decode hard state: %w", err)
		}
		return r, nil
	default:
		return hardStateRecord{}, fmt.Errorf("hard state presence byte %d: %w", b[8], errCorrupt)
	}
}

// firstMarker is the payload of the first file: the index and term of the
// entry just before the first one served (MemoryStorage's dummy entry),
// and the generation of the last snapshot applied with ApplySnapshot.
type firstMarker struct {
	index, term, gen uint64
}

func encodeFirst(m firstMarker) []byte {
	b := binary.LittleEndian.AppendUint64(nil, m.index)
	b = binary.LittleEndian.AppendUint64(b, m.term)
	return binary.LittleEndian.AppendUint64(b, m.gen)
}

func decodeFirst(b []byte) (firstMarker, error) {
	if len(b) != 24 {
		return firstMarker{}, fmt.Errorf("first marker of %d bytes: %w", len(b), errCorrupt)
	}
	return firstMarker{
		index: binary.LittleEndian.Uint64(b[0:]),
		term:  binary.LittleEndian.Uint64(b[8:]),
		gen:   binary.LittleEndian.Uint64(b[16:]),
	}, nil
}

// Snapshot kinds stored in the snapshot file.
const (
	snapCreated = 1 // written by CreateSnapshot: the log is unchanged
	snapApplied = 2 // written by ApplySnapshot: the log is replaced
)

// snapshotRecord is the payload of the snapshot file.
type snapshotRecord struct {
	kind byte
	gen  uint64 // for snapApplied: the generation the first marker takes
	snap *pb.Snapshot
}

func encodeSnapshot(r snapshotRecord) ([]byte, error) {
	b := make([]byte, 9, 9+proto.Size(r.snap))
	b[0] = r.kind
	binary.LittleEndian.PutUint64(b[1:], r.gen)
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, r.snap)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	return b, nil
}

func decodeSnapshot(b []byte) (snapshotRecord, error) {
	if len(b) < 9 || (b[0] != snapCreated && b[0] != snapApplied) {
		return snapshotRecord{}, fmt.Errorf("snapshot header: %w", errCorrupt)
	}
	r := snapshotRecord{kind: b[0], gen: binary.LittleEndian.Uint64(b[1:]), snap: &pb.Snapshot{}}
	if err := proto.Unmarshal(b[9:], r.snap); err != nil {
		return snapshotRecord{}, fmt.Errorf("decode snapshot: %w", err)
	}
	pb.EnsureSnapshot(r.snap)
	return r, nil
}

// readOptional reads the record file dir/name; ok is false when the file
// does not exist.
func readOptional(dir, name string) (payload []byte, ok bool, err error) {
	payload, err = readRecordFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return payload, true, nil
}
