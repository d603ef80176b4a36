package wire

import (
	"math"
	"unicode/utf8"
)

// Personal-access-token expiry sentinels and limits (commands.md §42,
// semantics.md 2.6).
const (
	// PATExpiryServerDefault asks for the server's default expiry, which
	// is currently "never".
	PATExpiryServerDefault uint64 = 0
	// PATExpiryNever asks for a token that never expires.
	PATExpiryNever uint64 = math.MaxUint64
	// MaxRawTokenLen is the longest raw token the [len u8] shape carries.
	MaxRawTokenLen = 255
)

// CreatePersonalAccessToken is the body of CREATE_PERSONAL_ACCESS_TOKEN
// (code 42, operation 146): [name Name][expiry u64].
//
// Expiry is a duration in microseconds from creation; 0 = server default
// (never), u64::MAX = never (PATExpiryServerDefault, PATExpiryNever).
//
// The official Go SDK has a quirk (vectors/README.md): it takes a u32
// argument and writes it into bytes 4..8 of the field, leaving bytes 0..4
// zero, so its expiry arrives as argument<<32 µs. Decode reads the field as
// the u64 it is on the wire, exactly as the reference server does, and does
// not try to undo the shift: an encoder that follows the spec cannot be
// told apart from the quirk, and 1<<32 µs (about 71.6 minutes) is a valid
// duration. AppendTo always writes the full u64 little-endian.
type CreatePersonalAccessToken struct {
	Name   string
	Expiry uint64
}

// Validate checks the name is 1..255 bytes of UTF-8 (the wire bound; the
// server may apply stricter rules).
func (c *CreatePersonalAccessToken) Validate() error {
	if !validName(c.Name) {
		return ErrInvalidPersonalAccessTokenName
	}
	return nil
}

// AppendTo appends the body.
func (c *CreatePersonalAccessToken) AppendTo(dst []byte) []byte {
	dst = appendName(dst, c.Name)
	return appendU64(dst, c.Expiry)
}

// Decode decodes the fields and ignores trailing bytes.
func (c *CreatePersonalAccessToken) Decode(src []byte) error {
	r := newReader(src)
	c.Name = r.name()
	c.Expiry = r.u64()
	return r.done()
}

// DeletePersonalAccessToken is the body of DELETE_PERSONAL_ACCESS_TOKEN
// (code 43, operation 147): [name Name].
type DeletePersonalAccessToken struct {
	Name string
}

// Validate checks the name is 1..255 bytes of UTF-8.
func (d *DeletePersonalAccessToken) Validate() error {
	if !validName(d.Name) {
		return ErrInvalidPersonalAccessTokenName
	}
	return nil
}

// AppendTo appends the body.
func (d *DeletePersonalAccessToken) AppendTo(dst []byte) []byte { return appendName(dst, d.Name) }

// Decode decodes the name and ignores trailing bytes.
func (d *DeletePersonalAccessToken) Decode(src []byte) error {
	r := newReader(src)
	d.Name = r.name()
	return r.done()
}

// RawToken is the payload of a successful CREATE_PERSONAL_ACCESS_TOKEN:
// [token_len u8][token], the raw token, shown only this once. Like the
// login token it may be empty on the wire; the reference server sends 68
// characters of base64.
type RawToken struct {
	Token string
}

// Validate checks the token fits 255 bytes of UTF-8.
func (t *RawToken) Validate() error {
	if len(t.Token) > MaxRawTokenLen || !utf8.ValidString(t.Token) {
		return ErrInvalidPersonalAccessToken
	}
	return nil
}

// AppendTo appends the payload.
func (t *RawToken) AppendTo(dst []byte) []byte { return appendShortString(dst, t.Token) }

// Decode decodes the payload, rejecting trailing bytes.
func (t *RawToken) Decode(src []byte) error {
	r := newReader(src)
	t.Token = r.shortString()
	return r.finish()
}

// PersonalAccessToken is one entry of the GET_PERSONAL_ACCESS_TOKENS
// reply: [name Name][expiry_at u64]. ExpiryAt is the absolute expiry in
// microseconds since the epoch; 0 = never expires.
type PersonalAccessToken struct {
	Name     string
	ExpiryAt uint64
}

// PersonalAccessTokens is the payload of GET_PERSONAL_ACCESS_TOKENS:
// entries back to back until the end, no count. No tokens is an empty
// payload, which decodes to an empty list (the Go SDK reports an "empty
// payload" error for it; a server must still send it empty).
type PersonalAccessTokens []PersonalAccessToken

// Validate checks every name is 1..255 bytes of UTF-8.
func (ps *PersonalAccessTokens) Validate() error {
	for i := range *ps {
		if !validName((*ps)[i].Name) {
			return ErrInvalidPersonalAccessTokenName
		}
	}
	return nil
}

// AppendTo appends every entry.
func (ps *PersonalAccessTokens) AppendTo(dst []byte) []byte {
	for i := range *ps {
		dst = appendName(dst, (*ps)[i].Name)
		dst = appendU64(dst, (*ps)[i].ExpiryAt)
	}
	return dst
}

// Decode decodes entries until the end of src. Each entry consumes at
// least 10 bytes, so the list grows with the input only.
func (ps *PersonalAccessTokens) Decode(src []byte) error {
	r := newReader(src)
	list := (*ps)[:0]
	for r.remaining() > 0 && r.err == nil {
		name := r.name()
		list = append(list, PersonalAccessToken{Name: name, ExpiryAt: r.u64()})
	}
	if err := r.finish(); err != nil {
		*ps = nil
		return err
	}
	*ps = list
	return nil
}
