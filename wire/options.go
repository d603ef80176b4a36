package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// Limits of an options block (encodings.md, "Options block"; semantics.md
// §3.4 and §8).
const (
	// MaxOptionPairs is the most key/value pairs one options block may hold.
	MaxOptionPairs = 1024
	// MaxOptionsBlockBytes is the most bytes one options block may span
	// (the TLV bytes, without the u32 length prefix of reply blocks).
	MaxOptionsBlockBytes = 100000
	// MaxOptionFieldLen is the longest key or value of one TLV field; the
	// field length is a u32 on the wire but never exceeds this.
	MaxOptionFieldLen = 255
	// optionFieldOverhead is the [kind u8][length u32] prefix of a TLV field.
	optionFieldOverhead = 5
)

// OptionKind is the kind byte of an option key or value: the header-kind
// code table of encodings.md ("Header kinds"), shared with message user
// headers. 0 is invalid; 16..255 are structurally accepted and forwarded
// (forward compatibility), only the catalog checks reject them.
type OptionKind uint8

// Option kinds (encodings.md, "Header kinds").
const (
	OptionKindRaw     OptionKind = 1
	OptionKindString  OptionKind = 2
	OptionKindBool    OptionKind = 3
	OptionKindInt8    OptionKind = 4
	OptionKindInt16   OptionKind = 5
	OptionKindInt32   OptionKind = 6
	OptionKindInt64   OptionKind = 7
	OptionKindInt128  OptionKind = 8
	OptionKindUint8   OptionKind = 9
	OptionKindUint16  OptionKind = 10
	OptionKindUint32  OptionKind = 11
	OptionKindUint64  OptionKind = 12
	OptionKindUint128 OptionKind = 13
	OptionKindFloat32 OptionKind = 14
	OptionKindFloat64 OptionKind = 15
)

// optionKindNames is indexed by kind code.
var optionKindNames = [...]string{
	"", "raw", "string", "bool", "int8", "int16", "int32", "int64", "int128",
	"uint8", "uint16", "uint32", "uint64", "uint128", "float32", "float64",
}

// String names the kind ("uint64"), or "kind(N)" for an undefined code.
func (k OptionKind) String() string {
	if k != 0 && int(k) < len(optionKindNames) {
		return optionKindNames[k]
	}
	return "kind(" + itoa(uint64(k)) + ")"
}

// FixedSize is the value size a defined fixed-width kind requires, or 0 for
// Raw, String and undefined kinds (whose values are 1..255 bytes).
func (k OptionKind) FixedSize() int {
	switch k {
	case OptionKindBool, OptionKindInt8, OptionKindUint8:
		return 1
	case OptionKindInt16, OptionKindUint16:
		return 2
	case OptionKindInt32, OptionKindUint32, OptionKindFloat32:
		return 4
	case OptionKindInt64, OptionKindUint64, OptionKindFloat64:
		return 8
	case OptionKindInt128, OptionKindUint128:
		return 16
	}
	return 0
}

// Option is one key/value pair of an options block. On the wire the key is
// a TLV field of kind String (2) and the value a TLV field of any non-zero
// kind: [kind u8][length u32][bytes], each length 1..255.
type Option struct {
	Key   string
	Kind  OptionKind
	Value []byte
}

// StringOption returns a String-kind option.
func StringOption(key, value string) Option {
	return Option{Key: key, Kind: OptionKindString, Value: []byte(value)}
}

// BoolOption returns a Bool-kind option (one byte, 0 or 1).
func BoolOption(key string, value bool) Option {
	b := byte(0)
	if value {
		b = 1
	}
	return Option{Key: key, Kind: OptionKindBool, Value: []byte{b}}
}

// Uint8Option returns a Uint8-kind option.
func Uint8Option(key string, value uint8) Option {
	return Option{Key: key, Kind: OptionKindUint8, Value: []byte{value}}
}

// Uint32Option returns a Uint32-kind option (little-endian).
func Uint32Option(key string, value uint32) Option {
	return Option{Key: key, Kind: OptionKindUint32, Value: binary.LittleEndian.AppendUint32(nil, value)}
}

// Uint64Option returns a Uint64-kind option (little-endian).
func Uint64Option(key string, value uint64) Option {
	return Option{Key: key, Kind: OptionKindUint64, Value: binary.LittleEndian.AppendUint64(nil, value)}
}

// Options is an options block: key/value pairs in wire order. Requests
// (Create/Update Stream, Topic, User) carry it as the last field running to
// the end of the body; replies (Stream, TopicHeader, User) prefix it with
// [options_len u32] (encodings.md, "Options block").
//
// The zero value is the empty block (zero bytes).
type Options []Option

// Get returns the option with the given key.
func (o Options) Get(key string) (Option, bool) {
	for _, opt := range o {
		if opt.Key == key {
			return opt, true
		}
	}
	return Option{}, false
}

// EncodedLen is the block's length on the wire (without a length prefix).
func (o Options) EncodedLen() int {
	n := 0
	for _, opt := range o {
		n += 2*optionFieldOverhead + len(opt.Key) + len(opt.Value)
	}
	return n
}

// Validate applies the structural rules a decoder enforces, so that a block
// that passes always decodes back to itself: every key 1..255 bytes of
// UTF-8, every value kind non-zero and value 1..255 bytes, no duplicate
// keys (ErrInvalidCommand), at most MaxOptionPairs pairs and
// MaxOptionsBlockBytes bytes (ErrOptionsBlockTooLarge).
func (o Options) Validate() error {
	if len(o) > MaxOptionPairs || o.EncodedLen() > MaxOptionsBlockBytes {
		return ErrOptionsBlockTooLarge
	}
	for i, opt := range o {
		if !validName(opt.Key) || opt.Kind == 0 || len(opt.Value) == 0 || len(opt.Value) > MaxOptionFieldLen {
			return ErrInvalidCommand
		}
		if duplicateKey(o[:i], opt.Key) {
			return ErrInvalidCommand
		}
	}
	return nil
}

// duplicateKey reports whether key is already in seen. A linear scan: the
// pair count is bounded by MaxOptionPairs and real blocks hold a handful.
func duplicateKey(seen Options, key string) bool {
	for _, opt := range seen {
		if opt.Key == key {
			return true
		}
	}
	return false
}

// AppendTo appends the block as request bodies carry it: the TLV pairs with
// no length prefix. Call Validate first; an invalid block encodes to bytes
// that do not decode.
func (o Options) AppendTo(dst []byte) []byte {
	for _, opt := range o {
		dst = append(dst, byte(OptionKindString))
		dst = appendU32(dst, uint32(len(opt.Key)))
		dst = append(dst, opt.Key...)
		dst = append(dst, byte(opt.Kind))
		dst = appendU32(dst, uint32(len(opt.Value)))
		dst = append(dst, opt.Value...)
	}
	return dst
}

// Decode decodes a whole request-form block (no length prefix). An empty
// src is the empty block. Errors: ErrInvalidCommand for a structural
// violation, ErrOptionsBlockTooLarge for the size limits.
func (o *Options) Decode(src []byte) error {
	r := newReader(src)
	*o = r.optionsToEnd()
	return r.finish()
}

// appendOptionsBlock appends the reply form: [options_len u32][TLV pairs].
func appendOptionsBlock(dst []byte, o Options) []byte {
	dst = appendU32(dst, uint32(o.EncodedLen()))
	return o.AppendTo(dst)
}

// optionsToEnd reads the request form: the options block runs to the end of
// the body.
func (r *reader) optionsToEnd() Options {
	if r.err == nil && r.remaining() > MaxOptionsBlockBytes {
		r.fail(ErrOptionsBlockTooLarge)
		return nil
	}
	return r.optionPairs(r.rest())
}

// optionsBlock reads the reply form: [options_len u32][TLV pairs]. The
// length is checked against MaxOptionsBlockBytes before anything is read.
func (r *reader) optionsBlock() Options {
	n := r.u32()
	if r.err == nil && n > MaxOptionsBlockBytes {
		r.fail(ErrOptionsBlockTooLarge)
		return nil
	}
	return r.optionPairs(r.take(int(n)))
}

// optionPairs parses block, which must be consumed exactly, with every rule
// of encodings.md ("User-headers TLV block", "Options block"). Keys and
// values are copied: the result does not alias the input frame. The first
// violation is recorded in r.
//
// Size-limit violations return ErrOptionsBlockTooLarge (4043), as
// semantics.md §3.4/§8 specify; encodings.md calls every violation a plain
// decode error (status 3), and errors.md notes the reference server does
// not send 4043. Callers that want the reference status can map 4043 to
// ErrInvalidCommand.
func (r *reader) optionPairs(block []byte) Options {
	if r.err != nil || len(block) == 0 {
		return nil
	}
	br := newReader(block)
	var out Options
	for br.remaining() > 0 {
		if len(out) == MaxOptionPairs {
			r.fail(ErrOptionsBlockTooLarge)
			return nil
		}
		keyKind, key := br.optionField()
		valKind, val := br.optionField()
		if br.err != nil {
			r.fail(br.err)
			return nil
		}
		if keyKind != OptionKindString || !utf8.Valid(key) || duplicateKeyBytes(out, key) {
			r.fail(ErrInvalidCommand)
			return nil
		}
		out = append(out, Option{Key: string(key), Kind: valKind, Value: append([]byte(nil), val...)})
	}
	return out
}

// duplicateKeyBytes is duplicateKey for a key still in the input buffer
// (the string conversion in the comparison does not allocate).
func duplicateKeyBytes(seen Options, key []byte) bool {
	for _, opt := range seen {
		if opt.Key == string(key) {
			return true
		}
	}
	return false
}

// optionField reads one TLV field: [kind u8 != 0][length u32 in 1..255][bytes].
func (r *reader) optionField() (OptionKind, []byte) {
	kind := OptionKind(r.u8())
	n := r.u32()
	if r.err != nil {
		return 0, nil
	}
	if kind == 0 || n == 0 || n > MaxOptionFieldLen {
		r.fail(ErrInvalidCommand)
		return 0, nil
	}
	return kind, r.take(int(n))
}
