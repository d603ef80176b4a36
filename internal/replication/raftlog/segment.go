package raftlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// segmentNameDigits is the width of the first index in a segment name.
const segmentNameDigits = 20

// scanBufferBytes is the read buffer used when scanning a segment on Open.
const scanBufferBytes = 1 << 20

// segment is one entry file: records of consecutive entries starting at
// first (the index in its name). size is the length of its valid records;
// new records are written at size.
type segment struct {
	first uint64
	path  string
	f     *os.File
	size  int64
}

// segmentName is the file name of the segment whose first entry is first.
func segmentName(first uint64) string {
	return fmt.Sprintf("%0*d%s", segmentNameDigits, first, segmentSuffix)
}

// parseSegmentName returns the first index encoded in a segment file
// name; ok is false for any other name.
func parseSegmentName(name string) (first uint64, ok bool) {
	digits, found := strings.CutSuffix(name, segmentSuffix)
	if !found || len(digits) != segmentNameDigits {
		return 0, false
	}
	first, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return first, true
}

// scannedEntry is what a scan learns of one record.
type scannedEntry struct {
	index, term uint64
	off         int64
	size        uint32 // payload bytes = proto.Size of the entry
}

// scanResult is the outcome of scanning one segment file.
type scanResult struct {
	fileSize  int64
	validSize int64 // bytes of good records from the start
	count     uint64
	// badAt is the offset of the first bad record, or -1; badErr says
	// why. badAtEnd is true when no good record of a later entry starts
	// anywhere after it: the signature of an interrupted write.
	badAt    int64
	badErr   error
	badAtEnd bool
}

// scanSegment reads every record of f (whose first entry is first),
// checking checksums and that indexes run first, first+1, ... A record
// with a valid checksum but the wrong index is an error. visit is called
// for every good record in order.
func scanSegment(f *os.File, first uint64, visit func(scannedEntry)) (scanResult, error) {
	st, err := f.Stat()
	if err != nil {
		return scanResult{}, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	res := scanResult{fileSize: st.Size(), badAt: -1}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, fmt.Errorf("seek %s: %w", f.Name(), err)
	}
	r := bufio.NewReaderSize(f, scanBufferBytes)
	var hdr [recordHeaderBytes]byte
	var payload []byte
	off := int64(0)
	for off < res.fileSize {
		bad := func(why error) (scanResult, error) {
			res.badAt, res.badErr = off, why
			later, err := validRecordAfter(f, off, res.fileSize, first+res.count)
			if err != nil {
				return res, err
			}
			res.badAtEnd = !later
			return res, nil
		}
		if res.fileSize-off < recordHeaderBytes {
			return bad(errTorn)
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return res, fmt.Errorf("read %s at offset %d: %w", f.Name(), off, err)
		}
		length, sum, err := parseRecordHeader(hdr[:])
		if err != nil {
			return bad(err)
		}
		end := off + recordHeaderBytes + int64(length)
		if end > res.fileSize {
			return bad(errTorn)
		}
		if cap(payload) < int(length) {
			payload = make([]byte, length)
		}
		payload = payload[:length]
		if _, err := io.ReadFull(r, payload); err != nil {
			return res, fmt.Errorf("read %s at offset %d: %w", f.Name(), off, err)
		}
		if recordChecksum(hdr[0:4], payload) != sum {
			return bad(errCorrupt)
		}
		index, term, err := entryIndexTerm(payload)
		if err != nil {
			return res, fmt.Errorf("%s at offset %d: %w", f.Name(), off, err)
		}
		if want := first + res.count; index != want {
			return res, fmt.Errorf("%s at offset %d: entry index %d, want %d: %w", f.Name(), off, index, want, errCorrupt)
		}
		visit(scannedEntry{index: index, term: term, off: off, size: length})
		res.count++
		off = end
		res.validSize = off
	}
	return res, nil
}

// maxResyncIndexes bounds how far past the bad record's index a record
// found by validRecordAfter may claim to be.
const maxResyncIndexes = 1 << 20

// validRecordAfter reports whether a good record of an entry after index
// bad (the index the bad record at off should have held) starts anywhere
// in f after off. If one does, the bad record is damage in the middle of
// the log, not the torn end of an interrupted write. It reads the rest of
// the file, which is at most a segment.
func validRecordAfter(f *os.File, off, size int64, bad uint64) (bool, error) {
	if size-off-1 < recordHeaderBytes {
		return false, nil
	}
	rest := make([]byte, size-off-1)
	if _, err := f.ReadAt(rest, off+1); err != nil {
		return false, fmt.Errorf("read %s at offset %d: %w", f.Name(), off+1, err)
	}
	for p := 0; p+recordHeaderBytes <= len(rest); p++ {
		length, _, err := parseRecordHeader(rest[p:])
		if err != nil || int64(length) > int64(len(rest)-p-recordHeaderBytes) {
			continue
		}
		body := rest[p+recordHeaderBytes : p+recordHeaderBytes+int(length)]
		if index, ok := leadingIndex(body); !ok || index < bad || index-bad > maxResyncIndexes {
			continue // cheap test first: most positions fail here
		}
		if _, _, err := decodeRecord(rest[p:]); err == nil {
			return true, nil
		}
	}
	return false, nil
}
