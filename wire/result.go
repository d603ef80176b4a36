package wire

import "encoding/binary"

// ResultEntry is one {index, result} pair of a result section.
type ResultEntry struct {
	Index  uint32
	Result uint32
}

// Limits of the result section: a reply carries at most one rejection in
// protocol 0.11.0; MaxResultEntries bounds what a decoder will walk.
const MaxResultEntries = 1024

// AppendResultOK appends the success result section [count=0]; the typed
// payload follows it.
func AppendResultOK(dst []byte) []byte { return appendU32(dst, 0) }

// AppendResultError appends the 12-byte committed (or transient) rejection
// [count=1][index=0][result=code].
func AppendResultError(dst []byte, code uint32) []byte {
	dst = appendU32(dst, 1)
	dst = appendU32(dst, 0)
	return appendU32(dst, code)
}

// SplitResult strips the result section from a result-framed body. It
// returns the payload after the section and, when the first non-zero
// result is found, that code as an error (ErrorForCode). A body shorter
// than 4 + 8*count is malformed: ErrInvalidCommand (framing.md, "Result
// section").
func SplitResult(body []byte) (payload []byte, err error) {
	if len(body) < 4 {
		return nil, ErrInvalidCommand
	}
	count := binary.LittleEndian.Uint32(body)
	if count > MaxResultEntries || uint64(len(body)) < 4+8*uint64(count) {
		return nil, ErrInvalidCommand
	}
	end := 4 + 8*int(count)
	for i := 4; i < end; i += 8 {
		if code := binary.LittleEndian.Uint32(body[i+4:]); code != 0 {
			return nil, ErrorForCode(code)
		}
	}
	return body[end:], nil
}

// DecodeResult parses a result section into entries (appended to dst) and
// returns the payload that follows it.
func DecodeResult(dst []ResultEntry, body []byte) ([]ResultEntry, []byte, error) {
	if len(body) < 4 {
		return dst, nil, ErrInvalidCommand
	}
	count := binary.LittleEndian.Uint32(body)
	if count > MaxResultEntries || uint64(len(body)) < 4+8*uint64(count) {
		return dst, nil, ErrInvalidCommand
	}
	for i := 0; i < int(count); i++ {
		o := 4 + 8*i
		dst = append(dst, ResultEntry{Index: binary.LittleEndian.Uint32(body[o:]), Result: binary.LittleEndian.Uint32(body[o+4:])})
	}
	return dst, body[4+8*int(count):], nil
}
