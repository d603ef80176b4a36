package wire

// DescribeOptions is the body of DESCRIBE_OPTIONS (code 13, operation 2):
// [scope u8] with 1 topic, 2 stream, 3 user (commands.md §13). Decode
// refuses any other scope with ErrInvalidCommand (status 3).
type DescribeOptions struct {
	Scope OptionScope
}

// AppendTo appends the body.
func (d *DescribeOptions) AppendTo(dst []byte) []byte { return append(dst, byte(d.Scope)) }

// Decode decodes the scope byte and ignores trailing bytes.
func (d *DescribeOptions) Decode(src []byte) error {
	r := newReader(src)
	d.Scope = OptionScope(r.u8())
	if r.err == nil && !d.Scope.Valid() {
		return ErrInvalidCommand
	}
	return r.done()
}

// Limits of the DESCRIBE_OPTIONS reply.
const (
	// MaxOptionDescriptionBytes bounds one entry's description when
	// decoding: the text is free-form and u32-prefixed, so a decoder caps
	// it rather than trusting the length.
	MaxOptionDescriptionBytes = 64 << 10
	// minOptionDescriptionLen is the smallest entry: key Name (2), kind,
	// default_len, description_len.
	minOptionDescriptionLen = 2 + 1 + 4 + 4
)

// OptionDescription is one entry of the DESCRIBE_OPTIONS reply:
// [key Name][kind u8][default_len u32][default][description_len u32]
// [description UTF-8]. Default is encoded in Kind and empty when the key
// has no default; Kind is a header kind code, never 0. Default is at most
// MaxOptionFieldLen bytes, like any option value.
type OptionDescription struct {
	Key         string
	Kind        OptionKind
	Default     []byte
	Description string
}

// OptionDescriptions is the plain reply payload of DESCRIBE_OPTIONS:
// [count u32][OptionDescription × count]. Stream and user scopes return
// count 0.
type OptionDescriptions []OptionDescription

// AppendTo appends the payload.
func (o *OptionDescriptions) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(*o)))
	for _, e := range *o {
		dst = appendName(dst, e.Key)
		dst = append(dst, byte(e.Kind))
		dst = appendU32(dst, uint32(len(e.Default)))
		dst = append(dst, e.Default...)
		dst = appendU32(dst, uint32(len(e.Description)))
		dst = append(dst, e.Description...)
	}
	return dst
}

// Decode decodes a whole payload; the count is checked against the bytes
// present before anything is allocated.
func (o *OptionDescriptions) Decode(src []byte) error {
	r := newReader(src)
	n := r.u32()
	if r.err == nil && uint64(n)*minOptionDescriptionLen > uint64(r.remaining()) {
		return ErrInvalidCommand
	}
	var out OptionDescriptions
	if n > 0 {
		out = make(OptionDescriptions, 0, n)
	}
	for i := uint32(0); i < n && r.err == nil; i++ {
		var e OptionDescription
		e.Key = r.name()
		e.Kind = OptionKind(r.u8())
		dl := r.u32()
		if r.err == nil && (e.Kind == 0 || dl > MaxOptionFieldLen) {
			r.fail(ErrInvalidCommand)
		}
		if d := r.take(int(dl)); len(d) > 0 {
			e.Default = append([]byte(nil), d...)
		}
		sl := r.u32()
		if r.err == nil && sl > MaxOptionDescriptionBytes {
			r.fail(ErrInvalidCommand)
		}
		e.Description = r.str(int(sl))
		out = append(out, e)
	}
	if err := r.finish(); err != nil {
		return err
	}
	*o = out
	return nil
}
