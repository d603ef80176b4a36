package storage

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
)

// fakeFormat is a tiny record layout that mimics the fields of the wire batch
// header the log relies on:
//
//	0  u64 base_offset     (batch: u64 at 8)
//	8  u64 timestamp       (batch: base_timestamp, u64 at 16)
//	16 u32 record length   (batch: batch_length, u64 at 32)
//	20 u32 message count   (batch: message_count, u32 at 48)
//	24 u64 checksum        (batch: batch_checksum, u64 at 40, plus frame checksums)
//	32 payload
//
// The checksum is CRC-64/ISO over every byte except the checksum field.
type fakeFormat struct{}

const fakeHeaderLen = 32

var crcTable = crc64.MakeTable(crc64.ISO)

var (
	errFakeLen      = errors.New("fake: bad length")
	errFakeChecksum = errors.New("fake: bad checksum")
	errFakeCount    = errors.New("fake: zero count")
)

func (fakeFormat) HeaderLen() int { return fakeHeaderLen }

func (fakeFormat) RecordLen(h []byte) (int64, error) {
	n := int64(binary.LittleEndian.Uint32(h[16:20]))
	if n < fakeHeaderLen {
		return 0, errFakeLen
	}
	return n, nil
}

func fakeChecksum(rec []byte) uint64 {
	c := crc64.Update(0, crcTable, rec[:24])
	return crc64.Update(c, crcTable, rec[32:])
}

func (fakeFormat) Verify(rec []byte) (RecordInfo, error) {
	if len(rec) < fakeHeaderLen || int(binary.LittleEndian.Uint32(rec[16:20])) != len(rec) {
		return RecordInfo{}, errFakeLen
	}
	if fakeChecksum(rec) != binary.LittleEndian.Uint64(rec[24:32]) {
		return RecordInfo{}, errFakeChecksum
	}
	count := binary.LittleEndian.Uint32(rec[20:24])
	if count == 0 {
		return RecordInfo{}, errFakeCount
	}
	return RecordInfo{
		BaseOffset: binary.LittleEndian.Uint64(rec[0:8]),
		Count:      count,
		Timestamp:  binary.LittleEndian.Uint64(rec[8:16]),
	}, nil
}

func (fakeFormat) Stamp(rec []byte, base, ts uint64) {
	binary.LittleEndian.PutUint64(rec[0:8], base)
	binary.LittleEndian.PutUint64(rec[8:16], ts)
	binary.LittleEndian.PutUint64(rec[24:32], fakeChecksum(rec))
}

// makeRecord builds an unstamped record of count messages with payload
// bytes derived from seed.
func makeRecord(count uint32, payload int, seed byte) []byte {
	rec := make([]byte, fakeHeaderLen+payload)
	binary.LittleEndian.PutUint32(rec[16:20], uint32(len(rec)))
	binary.LittleEndian.PutUint32(rec[20:24], count)
	for i := range payload {
		rec[fakeHeaderLen+i] = seed + byte(i)
	}
	return rec
}

// stampedRecord builds a complete, valid record as it would be stored.
func stampedRecord(base uint64, ts uint64, count uint32, payload int, seed byte) []byte {
	rec := makeRecord(count, payload, seed)
	fakeFormat{}.Stamp(rec, base, ts)
	return rec
}
