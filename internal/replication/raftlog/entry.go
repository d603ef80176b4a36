package raftlog

import (
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Field numbers of raftpb.Entry.
const (
	entryFieldTerm  = 2
	entryFieldIndex = 3
)

// Records hold the raftpb.Entry protobuf unchanged, so a record's payload
// length is exactly proto.Size(entry), the size raft's maxSize limits count.

// appendEntryRecord appends the record of e to dst and returns the new
// slice and the payload size.
func appendEntryRecord(dst []byte, e *pb.Entry) ([]byte, uint32, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // the header, filled in below
	dst, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, e)
	if err != nil {
		return dst[:start], 0, fmt.Errorf("encode entry %d: %w", e.GetIndex(), err)
	}
	payload := dst[start+recordHeaderBytes:]
	if len(payload) > MaxEntryBytes {
		return dst[:start], 0, fmt.Errorf("entry %d is %d bytes, over the %d limit", e.GetIndex(), len(payload), MaxEntryBytes)
	}
	putRecordHeader(dst[start:start+recordHeaderBytes], payload)
	return dst, uint32(len(payload)), nil
}

// entryIndexTerm reads the index and term of an encoded entry without
// decoding (and copying) its data.
func entryIndexTerm(b []byte) (index, term uint64, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, fmt.Errorf("entry tag: %w: %w", protowire.ParseError(n), errCorrupt)
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == entryFieldTerm || num == entryFieldIndex) {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, fmt.Errorf("entry field %d: %w: %w", num, protowire.ParseError(n), errCorrupt)
			}
			if num == entryFieldTerm {
				term = v
			} else {
				index = v
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, 0, fmt.Errorf("entry field %d: %w: %w", num, protowire.ParseError(n), errCorrupt)
		}
		b = b[n:]
	}
	return index, term, nil
}

// leadingIndex returns the index of an encoded entry if it appears among
// its first three fields (where deterministic marshalling puts it: type,
// term, index, data), in constant time.
func leadingIndex(b []byte) (uint64, bool) {
	for range 3 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.VarintType {
			return 0, false
		}
		b = b[n:]
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return 0, false
		}
		b = b[n:]
		if num == entryFieldIndex {
			return v, true
		}
	}
	return 0, false
}

// decodeEntry decodes an entry payload into a new Entry (its Data is a
// copy, never an alias of b).
func decodeEntry(b []byte) (*pb.Entry, error) {
	e := &pb.Entry{}
	if err := proto.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("decode entry: %w", err)
	}
	return e, nil
}
