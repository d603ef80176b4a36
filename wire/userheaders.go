package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// Limits of user headers (encodings.md, "User-headers TLV block";
// semantics.md §4.1).
const (
	// MaxHeaderFieldLen is the longest key or value of a TLV field: the
	// u32 length prefix never exceeds 255.
	MaxHeaderFieldLen = 255
	// MaxUserHeadersSize is the SDK-side cap on one message's encoded user
	// headers (Go SDK MaxUserHeadersSize). The reference server does not
	// enforce it on the binary path; producers (BatchBuilder) do.
	MaxUserHeadersSize = 100_000
	// headerFieldPrefix is [kind u8][length u32].
	headerFieldPrefix = 5
)

// HeaderKind is the one-byte type tag shared by message user headers and
// option values (encodings.md, "Header kinds").
type HeaderKind uint8

// Header kinds. 0 is invalid; 16..255 are undefined but structurally
// accepted and forwarded (forward compatibility): only semantic checks
// (HeaderField.Validate) reject them.
const (
	HeaderRaw     HeaderKind = 1
	HeaderString  HeaderKind = 2
	HeaderBool    HeaderKind = 3
	HeaderInt8    HeaderKind = 4
	HeaderInt16   HeaderKind = 5
	HeaderInt32   HeaderKind = 6
	HeaderInt64   HeaderKind = 7
	HeaderInt128  HeaderKind = 8
	HeaderUint8   HeaderKind = 9
	HeaderUint16  HeaderKind = 10
	HeaderUint32  HeaderKind = 11
	HeaderUint64  HeaderKind = 12
	HeaderUint128 HeaderKind = 13
	HeaderFloat32 HeaderKind = 14
	HeaderFloat64 HeaderKind = 15
)

var headerKindNames = [...]string{
	HeaderRaw: "Raw", HeaderString: "String", HeaderBool: "Bool",
	HeaderInt8: "Int8", HeaderInt16: "Int16", HeaderInt32: "Int32", HeaderInt64: "Int64", HeaderInt128: "Int128",
	HeaderUint8: "Uint8", HeaderUint16: "Uint16", HeaderUint32: "Uint32", HeaderUint64: "Uint64", HeaderUint128: "Uint128",
	HeaderFloat32: "Float32", HeaderFloat64: "Float64",
}

// headerKindSizes is the fixed value size of each numeric kind (0 = variable).
var headerKindSizes = [...]uint8{
	HeaderBool: 1, HeaderInt8: 1, HeaderInt16: 2, HeaderInt32: 4, HeaderInt64: 8, HeaderInt128: 16,
	HeaderUint8: 1, HeaderUint16: 2, HeaderUint32: 4, HeaderUint64: 8, HeaderUint128: 16,
	HeaderFloat32: 4, HeaderFloat64: 8,
}

// Defined reports whether k is one of the 15 defined kinds.
func (k HeaderKind) Defined() bool { return k >= HeaderRaw && k <= HeaderFloat64 }

// String returns the kind's name.
func (k HeaderKind) String() string {
	if k.Defined() {
		return headerKindNames[k]
	}
	return "HeaderKind(" + itoa(uint64(k)) + ")"
}

// FixedSize is the value size of a numeric or Bool kind, or 0 for Raw,
// String and undefined kinds (1..255 bytes).
func (k HeaderKind) FixedSize() int {
	if int(k) < len(headerKindSizes) {
		return int(headerKindSizes[k])
	}
	return 0
}

// HeaderField is one TLV field: [kind u8][length u32][data]. Decoded data
// aliases the decoded buffer.
type HeaderField struct {
	Kind HeaderKind
	Data []byte
}

// Validate applies the semantic rules of encodings.md "Header kinds": a
// defined kind (ErrInvalidHeaderKind), the kind's value size (1..255 for
// Raw and String, the fixed size for numbers), UTF-8 for String and 0/1
// for Bool (ErrInvalidHeaderValue).
func (f HeaderField) Validate() error {
	if !f.Kind.Defined() {
		return ErrInvalidHeaderKind
	}
	n := len(f.Data)
	if size := f.Kind.FixedSize(); size != 0 {
		if n != size {
			return ErrInvalidHeaderValue
		}
	} else if n < 1 || n > MaxHeaderFieldLen {
		return ErrInvalidHeaderValue
	}
	switch f.Kind {
	case HeaderString:
		if !utf8.Valid(f.Data) {
			return ErrInvalidHeaderValue
		}
	case HeaderBool:
		if f.Data[0] > 1 {
			return ErrInvalidHeaderValue
		}
	}
	return nil
}

// RawHeader returns a Raw field (1..255 bytes; data is not copied).
func RawHeader(data []byte) HeaderField { return HeaderField{Kind: HeaderRaw, Data: data} }

// StringHeader returns a String field (1..255 bytes of UTF-8).
func StringHeader(s string) HeaderField { return HeaderField{Kind: HeaderString, Data: []byte(s)} }

// BoolHeader returns a Bool field.
func BoolHeader(v bool) HeaderField {
	b := byte(0)
	if v {
		b = 1
	}
	return HeaderField{Kind: HeaderBool, Data: []byte{b}}
}

// Int8Header returns an Int8 field.
func Int8Header(v int8) HeaderField { return HeaderField{Kind: HeaderInt8, Data: []byte{byte(v)}} }

// Int16Header returns an Int16 field.
func Int16Header(v int16) HeaderField {
	return HeaderField{Kind: HeaderInt16, Data: appendU16(nil, uint16(v))}
}

// Int32Header returns an Int32 field.
func Int32Header(v int32) HeaderField {
	return HeaderField{Kind: HeaderInt32, Data: appendU32(nil, uint32(v))}
}

// Int64Header returns an Int64 field.
func Int64Header(v int64) HeaderField {
	return HeaderField{Kind: HeaderInt64, Data: appendU64(nil, uint64(v))}
}

// Int128Header returns an Int128 field from its two's-complement 128-bit
// pattern.
func Int128Header(v Uint128) HeaderField {
	return HeaderField{Kind: HeaderInt128, Data: appendU128(nil, v)}
}

// Uint8Header returns a Uint8 field.
func Uint8Header(v uint8) HeaderField { return HeaderField{Kind: HeaderUint8, Data: []byte{v}} }

// Uint16Header returns a Uint16 field.
func Uint16Header(v uint16) HeaderField {
	return HeaderField{Kind: HeaderUint16, Data: appendU16(nil, v)}
}

// Uint32Header returns a Uint32 field.
func Uint32Header(v uint32) HeaderField {
	return HeaderField{Kind: HeaderUint32, Data: appendU32(nil, v)}
}

// Uint64Header returns a Uint64 field.
func Uint64Header(v uint64) HeaderField {
	return HeaderField{Kind: HeaderUint64, Data: appendU64(nil, v)}
}

// Uint128Header returns a Uint128 field.
func Uint128Header(v Uint128) HeaderField {
	return HeaderField{Kind: HeaderUint128, Data: appendU128(nil, v)}
}

// Float32Header returns a Float32 field.
func Float32Header(v float32) HeaderField {
	return HeaderField{Kind: HeaderFloat32, Data: appendU32(nil, math.Float32bits(v))}
}

// Float64Header returns a Float64 field.
func Float64Header(v float64) HeaderField {
	return HeaderField{Kind: HeaderFloat64, Data: appendU64(nil, math.Float64bits(v))}
}

// Bool returns the value of a valid Bool field.
func (f HeaderField) Bool() (bool, error) {
	if f.Kind != HeaderBool || len(f.Data) != 1 || f.Data[0] > 1 {
		return false, ErrInvalidHeaderValue
	}
	return f.Data[0] == 1, nil
}

// Uint64 returns the value of a Uint8, Uint16, Uint32 or Uint64 field.
func (f HeaderField) Uint64() (uint64, error) {
	switch {
	case f.Kind == HeaderUint8 && len(f.Data) == 1:
		return uint64(f.Data[0]), nil
	case f.Kind == HeaderUint16 && len(f.Data) == 2:
		return uint64(binary.LittleEndian.Uint16(f.Data)), nil
	case f.Kind == HeaderUint32 && len(f.Data) == 4:
		return uint64(binary.LittleEndian.Uint32(f.Data)), nil
	case f.Kind == HeaderUint64 && len(f.Data) == 8:
		return binary.LittleEndian.Uint64(f.Data), nil
	}
	return 0, ErrInvalidHeaderValue
}

// Int64 returns the value of an Int8, Int16, Int32 or Int64 field.
func (f HeaderField) Int64() (int64, error) {
	switch {
	case f.Kind == HeaderInt8 && len(f.Data) == 1:
		return int64(int8(f.Data[0])), nil
	case f.Kind == HeaderInt16 && len(f.Data) == 2:
		return int64(int16(binary.LittleEndian.Uint16(f.Data))), nil
	case f.Kind == HeaderInt32 && len(f.Data) == 4:
		return int64(int32(binary.LittleEndian.Uint32(f.Data))), nil
	case f.Kind == HeaderInt64 && len(f.Data) == 8:
		return int64(binary.LittleEndian.Uint64(f.Data)), nil
	}
	return 0, ErrInvalidHeaderValue
}

// Float64 returns the value of a Float32 or Float64 field.
func (f HeaderField) Float64() (float64, error) {
	switch {
	case f.Kind == HeaderFloat32 && len(f.Data) == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(f.Data))), nil
	case f.Kind == HeaderFloat64 && len(f.Data) == 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(f.Data)), nil
	}
	return 0, ErrInvalidHeaderValue
}

// Text returns the value of a valid String field (a copy).
func (f HeaderField) Text() (string, error) {
	if f.Kind != HeaderString || len(f.Data) == 0 || len(f.Data) > MaxHeaderFieldLen || !utf8.Valid(f.Data) {
		return "", ErrInvalidHeaderValue
	}
	return string(f.Data), nil
}

func (f HeaderField) appendTo(dst []byte) []byte {
	dst = append(dst, byte(f.Kind))
	dst = appendU32(dst, uint32(len(f.Data)))
	return append(dst, f.Data...)
}

// UserHeader is one key/value pair of a user-headers block.
type UserHeader struct {
	Key   HeaderField
	Value HeaderField
}

// UserHeaders is a decoded user-headers TLV block: key/value field pairs
// in wire order (encodings.md, "User-headers TLV block"). Duplicate keys
// are allowed by the message format and kept.
type UserHeaders []UserHeader

// EncodedLen is the block's length on the wire.
func (h UserHeaders) EncodedLen() int {
	n := 0
	for _, p := range h {
		n += 2*headerFieldPrefix + len(p.Key.Data) + len(p.Value.Data)
	}
	return n
}

// Validate checks the block is structurally encodable and within the SDK
// limit: no kind 0 and field lengths 1..255 (ErrInvalidHeaderKind,
// ErrInvalidHeaderKey, ErrInvalidHeaderValue), at most MaxUserHeadersSize
// encoded bytes (ErrTooBigUserHeaders). It does not apply the per-kind
// semantic rules; use HeaderField.Validate for those.
func (h UserHeaders) Validate() error {
	for _, p := range h {
		if p.Key.Kind == 0 || p.Value.Kind == 0 {
			return ErrInvalidHeaderKind
		}
		if len(p.Key.Data) == 0 || len(p.Key.Data) > MaxHeaderFieldLen {
			return ErrInvalidHeaderKey
		}
		if len(p.Value.Data) == 0 || len(p.Value.Data) > MaxHeaderFieldLen {
			return ErrInvalidHeaderValue
		}
	}
	if h.EncodedLen() > MaxUserHeadersSize {
		return ErrTooBigUserHeaders
	}
	return nil
}

// AppendTo appends the TLV block (no length prefix). Call Validate first:
// invalid fields are written as given and will not decode.
func (h UserHeaders) AppendTo(dst []byte) []byte {
	for _, p := range h {
		dst = p.Key.appendTo(dst)
		dst = p.Value.appendTo(dst)
	}
	return dst
}

// Decode parses a whole block with the structural rules
// (ValidateUserHeaders), reusing the receiver's backing array. Field data
// aliases src. An empty block decodes to zero pairs.
func (h *UserHeaders) Decode(src []byte) error {
	pairs, err := ValidateUserHeaders(src)
	if err != nil {
		return err
	}
	out := (*h)[:0]
	if cap(out) < pairs {
		out = make(UserHeaders, 0, pairs)
	}
	it := IterUserHeaders(src)
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		out = append(out, p)
	}
	*h = out
	return nil
}

// ValidateUserHeaders applies the structural TLV rules of encodings.md
// without allocating: every kind non-zero, every length 1..255, no field
// running past the end, an even number of fields consuming the block
// exactly. It returns the number of pairs; any violation is
// ErrInvalidCommand (a wire decode error). Undefined kinds 16..255 pass.
func ValidateUserHeaders(block []byte) (pairs int, err error) {
	fields := 0
	for off := 0; off < len(block); {
		if len(block)-off < headerFieldPrefix {
			return 0, ErrInvalidCommand
		}
		kind := block[off]
		n := binary.LittleEndian.Uint32(block[off+1:])
		if kind == 0 || n == 0 || n > MaxHeaderFieldLen || int(n) > len(block)-off-headerFieldPrefix {
			return 0, ErrInvalidCommand
		}
		off += headerFieldPrefix + int(n)
		fields++
	}
	if fields%2 != 0 {
		return 0, ErrInvalidCommand
	}
	return fields / 2, nil
}

// UserHeadersIter walks the pairs of a block without allocating. Use it on
// a block that passed ValidateUserHeaders, or check Err after the loop.
type UserHeadersIter struct {
	b   []byte
	off int
	err error
}

// IterUserHeaders returns an iterator over block.
func IterUserHeaders(block []byte) UserHeadersIter { return UserHeadersIter{b: block} }

// Next returns the next pair, or ok == false at the end of the block or on
// a structural error (see Err).
func (it *UserHeadersIter) Next() (p UserHeader, ok bool) {
	if it.err != nil || it.off >= len(it.b) {
		return UserHeader{}, false
	}
	k, kok := it.field()
	v, vok := it.field()
	if !kok || !vok {
		it.err = ErrInvalidCommand
		return UserHeader{}, false
	}
	return UserHeader{Key: k, Value: v}, true
}

// Err returns the structural error that stopped the walk, if any.
func (it *UserHeadersIter) Err() error { return it.err }

func (it *UserHeadersIter) field() (HeaderField, bool) {
	b, off := it.b, it.off
	if len(b)-off < headerFieldPrefix {
		return HeaderField{}, false
	}
	kind := HeaderKind(b[off])
	n := binary.LittleEndian.Uint32(b[off+1:])
	if kind == 0 || n == 0 || n > MaxHeaderFieldLen || int(n) > len(b)-off-headerFieldPrefix {
		return HeaderField{}, false
	}
	start := off + headerFieldPrefix
	end := start + int(n)
	it.off = end
	return HeaderField{Kind: kind, Data: b[start:end:end]}, true
}
