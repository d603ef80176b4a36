package wire

import "unicode/utf8"

// MaxNameLen is the longest Name (encodings.md, "Name"): 1..255 bytes of UTF-8.
const MaxNameLen = 255

// validName reports whether s is a valid Name: 1..255 bytes of UTF-8.
func validName(s string) bool { return len(s) >= 1 && len(s) <= MaxNameLen && utf8.ValidString(s) }

// appendName appends [len u8][bytes]. The caller has validated s; a string
// longer than 255 bytes is truncated so the output always decodes.
func appendName(dst []byte, s string) []byte {
	if len(s) > MaxNameLen {
		s = s[:MaxNameLen]
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// name reads a Name: [len u8][UTF-8 bytes], length 1..255.
func (r *reader) name() string {
	n := int(r.u8())
	if r.err == nil && n == 0 {
		r.fail(ErrInvalidCommand)
		return ""
	}
	return r.str(n)
}

// shortString reads [len u8][bytes] allowing length 0 (passwords, tokens);
// the bytes must be UTF-8.
func (r *reader) shortString() string { return r.str(int(r.u8())) }

// IdentifierKind is the first byte of an Identifier.
type IdentifierKind uint8

// Identifier kinds.
const (
	IDNumeric IdentifierKind = 1
	IDString  IdentifierKind = 2
)

// Identifier names a stream, topic, consumer group, user or consumer either
// by numeric id or by name (encodings.md, "Identifier"):
// [kind u8][len u8][value]. Numeric values are u32 (len 4); names are 1..255
// bytes of UTF-8.
type Identifier struct {
	Kind IdentifierKind
	// Num is the numeric value when Kind == IDNumeric.
	Num uint32
	// Str is the name when Kind == IDString.
	Str string
}

// NumericID returns a numeric Identifier.
func NumericID(id uint32) Identifier { return Identifier{Kind: IDNumeric, Num: id} }

// NamedID returns a string Identifier.
func NamedID(name string) Identifier { return Identifier{Kind: IDString, Str: name} }

// IsNumeric reports whether the identifier is numeric.
func (id Identifier) IsNumeric() bool { return id.Kind == IDNumeric }

// String renders the identifier for logs and messages: the number or the name.
func (id Identifier) String() string {
	if id.Kind == IDNumeric {
		return itoa(uint64(id.Num))
	}
	return id.Str
}

// Validate checks the identifier can be encoded: a known kind and, for
// names, 1..255 bytes of UTF-8.
func (id Identifier) Validate() error {
	switch id.Kind {
	case IDNumeric:
		return nil
	case IDString:
		if validName(id.Str) {
			return nil
		}
		return ErrInvalidIdentifier
	}
	return ErrInvalidIdentifier
}

// EncodedLen is the identifier's length on the wire.
func (id Identifier) EncodedLen() int {
	if id.Kind == IDNumeric {
		return 6
	}
	return 2 + len(id.Str)
}

// AppendTo appends the identifier. A string longer than 255 bytes is
// truncated; call Validate first to refuse it.
func (id Identifier) AppendTo(dst []byte) []byte {
	if id.Kind == IDNumeric {
		dst = append(dst, byte(IDNumeric), 4)
		return appendU32(dst, id.Num)
	}
	s := id.Str
	if len(s) > MaxNameLen {
		s = s[:MaxNameLen]
	}
	dst = append(dst, byte(IDString), byte(len(s)))
	return append(dst, s...)
}

// Decode reads exactly one identifier from src (no trailing bytes).
func (id *Identifier) Decode(src []byte) error {
	r := newReader(src)
	*id = r.identifier()
	return r.finish()
}

// identifier reads [kind][len][value] with the rules of encodings.md.
func (r *reader) identifier() Identifier {
	kind := IdentifierKind(r.u8())
	n := int(r.u8())
	if r.err != nil {
		return Identifier{}
	}
	switch {
	case kind == IDNumeric && n == 4:
		return Identifier{Kind: IDNumeric, Num: r.u32()}
	case kind == IDString && n > 0:
		return Identifier{Kind: IDString, Str: r.str(n)}
	}
	r.fail(ErrInvalidCommand)
	return Identifier{}
}
