// Package jsonscan walks a JSON text by hand for the few fast paths that
// read one known shape without encoding/json. A Scanner skips whitespace
// between tokens (or, when Compact, refuses it), refuses strings with
// escapes or control bytes, and
// reads only unsigned integer literals; every method returns false on
// anything outside that subset, so the caller can fall back to
// encoding/json.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/iggo-dev/iggo/wire"
)

// Scanner reads the JSON text B from the offset I. After a method returns
// false the offset is unspecified and the scan should be abandoned.
type Scanner struct {
	// B is the JSON text.
	B []byte
	// I is the offset of the next byte to read.
	I int
	// Compact makes the scanner refuse whitespace between tokens.
	Compact bool
}

// WS skips JSON whitespace, unless the scanner is Compact.
func (s *Scanner) WS() {
	for !s.Compact && s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Lit consumes the byte c after whitespace.
func (s *Scanner) Lit(c byte) bool {
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// Peek reports whether the next byte after whitespace is c, without
// consuming it.
func (s *Scanner) Peek(c byte) bool {
	s.WS()
	return s.I < len(s.B) && s.B[s.I] == c
}

// Str reads a string without escapes or control bytes and returns its
// contents, aliasing the input. For valid UTF-8 input the bytes are the
// decoded string.
func (s *Scanner) Str() ([]byte, bool) {
	if !s.Lit('"') {
		return nil, false
	}
	n := bytes.IndexByte(s.B[s.I:], '"')
	if n < 0 {
		return nil, false
	}
	v := s.B[s.I : s.I+n]
	if bytes.IndexByte(v, '\\') >= 0 || HasControl(v) {
		return nil, false
	}
	s.I += n + 1
	return v, true
}

// HasControl reports whether b holds a byte below 0x20, eight bytes at a
// time: (x - 0x20…20) &^ x & 0x80…80 is non-zero exactly when some byte
// of x is below 0x20.
func HasControl(b []byte) bool {
	const ones, highs = 0x2020202020202020, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// Object reads {"key": value, ...}; field reads each value after its key
// and colon and returns false to stop the scan.
func (s *Scanner) Object(field func(key []byte) bool) bool {
	if !s.Lit('{') {
		return false
	}
	if s.Lit('}') {
		return true
	}
	for {
		key, ok := s.Str()
		if !ok || !s.Lit(':') || !field(key) {
			return false
		}
		if s.Lit('}') {
			return true
		}
		if !s.Lit(',') {
			return false
		}
	}
}

// Array reads [value, ...]; elem reads each value and returns false to
// stop the scan.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.Lit('[') {
		return false
	}
	if s.Lit(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Lit(']') {
			return true
		}
		if !s.Lit(',') {
			return false
		}
	}
}

// EmptyArray reads [].
func (s *Scanner) EmptyArray() bool { return s.Lit('[') && s.Lit(']') }

// U64 reads an integer literal that fits a u64 (no sign, fraction,
// exponent or leading zero).
func (s *Scanner) U64() (uint64, bool) {
	v, ok := s.U128()
	return v.Lo, ok && v.Hi == 0
}

// U128 reads an integer literal below 2^128 (no sign, fraction, exponent
// or leading zero).
func (s *Scanner) U128() (wire.Uint128, bool) {
	s.WS()
	start := s.I
	for s.I < len(s.B) && s.B[s.I] >= '0' && s.B[s.I] <= '9' {
		s.I++
	}
	digits := s.B[start:s.I]
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return wire.Uint128{}, false
	}
	if s.I < len(s.B) {
		switch s.B[s.I] {
		case '.', 'e', 'E':
			return wire.Uint128{}, false
		}
	}
	return decimal(digits)
}

// DecimalString reads a string of 1 to 39 decimal digits whose value fits
// a u128; leading zeros are allowed.
func (s *Scanner) DecimalString() (wire.Uint128, bool) {
	v, ok := s.Str()
	if !ok || len(v) == 0 || len(v) > 39 {
		return wire.Uint128{}, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return wire.Uint128{}, false
		}
	}
	return decimal(v)
}

// decimal returns the value of the decimal digits in v, or false when it
// does not fit 128 bits.
func decimal(v []byte) (wire.Uint128, bool) {
	var hi, lo uint64
	for _, c := range v {
		// (hi, lo) = (hi, lo)*10 + digit, refusing an overflow of 128 bits.
		carry, l := bits.Mul64(lo, 10)
		over, h := bits.Mul64(hi, 10)
		h, c1 := bits.Add64(h, carry, 0)
		l, c2 := bits.Add64(l, uint64(c-'0'), 0)
		h, c3 := bits.Add64(h, 0, c2)
		if over != 0 || c1 != 0 || c3 != 0 {
			return wire.Uint128{}, false
		}
		hi, lo = h, l
	}
	return wire.Uint128{Hi: hi, Lo: lo}, true
}
