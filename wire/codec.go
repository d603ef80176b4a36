package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// Uint128 is a 128-bit unsigned integer as the protocol carries it: 16 bytes
// little-endian, the low 64-bit half first (client ids, message ids,
// header checksums).
type Uint128 struct {
	Lo uint64
	Hi uint64
}

// IsZero reports whether u is zero.
func (u Uint128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

// PutUint128 writes u little-endian into b[:16].
func PutUint128(b []byte, u Uint128) {
	_ = b[15]
	binary.LittleEndian.PutUint64(b[0:8], u.Lo)
	binary.LittleEndian.PutUint64(b[8:16], u.Hi)
}

// GetUint128 reads a little-endian u128 from b[:16].
func GetUint128(b []byte) Uint128 {
	_ = b[15]
	return Uint128{Lo: binary.LittleEndian.Uint64(b[0:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}

// reader is a sticky-error little-endian decoder over a byte slice: the first
// short read poisons it and every later read returns zero values, so a
// decoder checks r.err (or r.finish) once at the end. It never allocates
// except where a method says it copies.
type reader struct {
	b   []byte
	off int
	err error
}

func newReader(b []byte) reader { return reader{b: b} }

// fail records err unless an earlier error is already recorded.
func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// remaining is the number of unread bytes.
func (r *reader) remaining() int { return len(r.b) - r.off }

// take returns the next n bytes as a sub-slice of the input (no copy).
func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail(ErrInvalidCommand)
		r.off = len(r.b)
		return nil
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() uint8 {
	s := r.take(1)
	if s == nil {
		return 0
	}
	return s[0]
}

func (r *reader) u16() uint16 {
	s := r.take(2)
	if s == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(s)
}

func (r *reader) u32() uint32 {
	s := r.take(4)
	if s == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(s)
}

func (r *reader) u64() uint64 {
	s := r.take(8)
	if s == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(s)
}

// str reads n bytes as a string (a copy), requiring valid UTF-8.
func (r *reader) str(n int) string {
	s := r.take(n)
	if s == nil {
		return ""
	}
	if !utf8.Valid(s) {
		r.fail(ErrInvalidCommand)
		return ""
	}
	return string(s)
}

// rest returns every unread byte (no copy).
func (r *reader) rest() []byte { return r.take(r.remaining()) }

// finish returns the first error, or ErrInvalidCommand when unread bytes
// remain. Reply decoders, whole-value decoders (Identifier, Consumer,
// Permissions, ...) and the inner length-delimited parts of a request
// (SEND_MESSAGES metadata) use it: they reject trailing bytes.
func (r *reader) finish() error {
	if r.err != nil {
		return r.err
	}
	if r.off != len(r.b) {
		return ErrInvalidCommand
	}
	return nil
}

// done returns the first error and ignores unread bytes. Request body
// decoders use it: the reference server decodes the fields it knows from
// the start of a request body and never looks at what follows them, so
// trailing bytes after the last field are accepted (style.md, "Wire
// codec"). Bodies whose last field runs to the end (an options block) or
// whose layout is length-checked (SEND_MESSAGES) stay exact.
func (r *reader) done() error { return r.err }

func appendU8(dst []byte, v uint8) []byte { return append(dst, v) }

func appendU16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }

func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

func appendU128(dst []byte, v Uint128) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, v.Lo)
	return binary.LittleEndian.AppendUint64(dst, v.Hi)
}

// grow extends dst by n bytes (contents of the new bytes unspecified),
// reusing spare capacity when there is enough.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	return append(dst, make([]byte, n)...)
}

// boolByte is the wire form of a boolean: 1 or 0.
func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// appendBool appends a boolean byte 0/1.
func appendBool(dst []byte, v bool) []byte { return append(dst, boolByte(v)) }

// flag reads a structural flag byte that must be 0 or 1.
func (r *reader) flag() bool {
	b := r.u8()
	if b > 1 {
		r.fail(ErrInvalidCommand)
		return false
	}
	return b == 1
}

// str32 reads [len u32][UTF-8 bytes] with len at most limit (a copy).
func (r *reader) str32(limit int) string {
	n := r.u32()
	if r.err == nil && uint64(n) > uint64(limit) {
		r.fail(ErrInvalidCommand)
		return ""
	}
	return r.str(int(n))
}

// appendStr32 appends [len u32][bytes].
func appendStr32(dst []byte, s string) []byte {
	dst = appendU32(dst, uint32(len(s)))
	return append(dst, s...)
}
