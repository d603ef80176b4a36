package raftlog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// recordHeaderBytes is the size of a record header: u32 payload length
// then u32 CRC-32C, both little-endian.
const recordHeaderBytes = 8

// MaxEntryBytes is the largest encoded entry (payload) a record may hold.
// The replica transport caps a frame at 64 MiB, so no real entry comes
// close; the limit only keeps a corrupt length from driving a huge read.
const MaxEntryBytes = 1 << 30

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Record decoding failures. errTorn means the bytes end before the record
// does (what an interrupted write leaves); errCorrupt means the record is
// complete but fails its checksum or declares an impossible length.
var (
	errTorn    = errors.New("torn record")
	errCorrupt = errors.New("corrupt record")
)

// recordChecksum is the CRC-32C over the four length bytes and the
// payload. Covering the length means a run of zero bytes (a file extended
// but never written) is never a valid record.
func recordChecksum(lenBytes, payload []byte) uint32 {
	return crc32.Update(crc32.Update(0, crcTable, lenBytes), crcTable, payload)
}

// putRecordHeader fills hdr (recordHeaderBytes long) for payload.
func putRecordHeader(hdr, payload []byte) {
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(hdr[4:8], recordChecksum(hdr[0:4], payload))
}

// parseRecordHeader returns the payload length and checksum in hdr, or
// errCorrupt if the length exceeds MaxEntryBytes.
func parseRecordHeader(hdr []byte) (length uint32, sum uint32, err error) {
	length = binary.LittleEndian.Uint32(hdr[0:4])
	sum = binary.LittleEndian.Uint32(hdr[4:8])
	if length > MaxEntryBytes {
		return 0, 0, errCorrupt
	}
	return length, sum, nil
}

// decodeRecord decodes the record at the start of b and returns its
// payload (a sub-slice of b) and the number of bytes the record occupies.
// It returns errTorn when b ends inside the record and errCorrupt when the
// length is impossible or the checksum does not match.
func decodeRecord(b []byte) (payload []byte, n int, err error) {
	if len(b) < recordHeaderBytes {
		return nil, 0, errTorn
	}
	length, sum, err := parseRecordHeader(b)
	if err != nil {
		return nil, 0, err
	}
	end := recordHeaderBytes + int(length)
	if len(b) < end {
		return nil, 0, errTorn
	}
	payload = b[recordHeaderBytes:end]
	if recordChecksum(b[0:4], payload) != sum {
		return nil, 0, errCorrupt
	}
	return payload, end, nil
}

// appendRecord appends the record holding payload to dst.
func appendRecord(dst, payload []byte) []byte {
	var hdr [recordHeaderBytes]byte
	putRecordHeader(hdr[:], payload)
	dst = append(dst, hdr[:]...)
	return append(dst, payload...)
}
