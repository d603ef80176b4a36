package wire

// Limits of the login bodies (commands.md §40, §45).
const (
	// MaxLoginContextBytes bounds the opaque context a login may carry; the
	// SDKs send none.
	MaxLoginContextBytes = 64 << 10
)

// Body is implemented by every request and reply body type: an appending
// encoder and a decoder. Reply decoders reject trailing bytes; request
// decoders ignore bytes after their last field where the reference server
// does (it decodes a prefix) and stay exact where the last field runs to
// the end of the body or the layout is length-checked (SEND_MESSAGES).
type Body interface {
	AppendTo(dst []byte) []byte
	Decode(src []byte) error
}

// ClientVersionInfo is the prefix of both login-register bodies:
// [protocol_version u32][sdk_name Name][sdk_version Name].
type ClientVersionInfo struct {
	ProtocolVersion uint32
	SDKName         string
	SDKVersion      string
}

func (v *ClientVersionInfo) appendTo(dst []byte) []byte {
	dst = appendU32(dst, v.ProtocolVersion)
	dst = appendName(dst, v.SDKName)
	return appendName(dst, v.SDKVersion)
}

func (v *ClientVersionInfo) read(r *reader) {
	v.ProtocolVersion = r.u32()
	v.SDKName = r.name()
	v.SDKVersion = r.name()
}

// DecodeClientVersionInfo decodes the version prefix of a login body and
// returns the bytes after it. A failure here is a malformed login
// (eviction reason 15).
func DecodeClientVersionInfo(body []byte) (ClientVersionInfo, []byte, error) {
	r := newReader(body)
	var v ClientVersionInfo
	v.read(&r)
	if r.err != nil {
		return ClientVersionInfo{}, nil, r.err
	}
	return v, r.rest(), nil
}

// appendContext appends [context_len u32][context].
func appendContext(dst, ctx []byte) []byte {
	dst = appendU32(dst, uint32(len(ctx)))
	return append(dst, ctx...)
}

// context reads [context_len u32][context]; a length over
// MaxLoginContextBytes is refused before anything is read.
func (r *reader) context() []byte {
	n := r.u32()
	if r.err == nil && n > MaxLoginContextBytes {
		r.fail(ErrInvalidCommand)
		return nil
	}
	b := r.take(int(n))
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// LoginRegister is the body of LOGIN_REGISTER (code 40, operation 1):
// the version prefix, [username Name][password_len u8][password]
// [context_len u32][context]. The password may be empty.
type LoginRegister struct {
	Version  ClientVersionInfo
	Username string
	Password string
	Context  []byte
}

// AppendTo appends the body.
func (l *LoginRegister) AppendTo(dst []byte) []byte {
	dst = l.Version.appendTo(dst)
	dst = appendName(dst, l.Username)
	dst = appendShortString(dst, l.Password)
	return appendContext(dst, l.Context)
}

// Decode decodes the fields and ignores trailing bytes after the context
// (commands.md §40: the reference does not check them).
func (l *LoginRegister) Decode(src []byte) error {
	r := newReader(src)
	l.Version.read(&r)
	l.readCredentials(&r)
	return r.done()
}

// DecodeCredentials decodes the part after the version prefix as the
// password shape. Trailing bytes after the context are ignored, as the
// reference server does when it tells the two login shapes apart.
func (l *LoginRegister) DecodeCredentials(rest []byte) error {
	r := newReader(rest)
	l.readCredentials(&r)
	return r.err
}

func (l *LoginRegister) readCredentials(r *reader) {
	l.Username = r.name()
	l.Password = r.shortString()
	l.Context = r.context()
}

// LoginRegisterWithPAT is the body of LOGIN_REGISTER_WITH_PAT (code 45,
// operation 1): the version prefix, [token_len u8][token]
// [context_len u32][context].
type LoginRegisterWithPAT struct {
	Version ClientVersionInfo
	Token   string
	Context []byte
}

// AppendTo appends the body.
func (l *LoginRegisterWithPAT) AppendTo(dst []byte) []byte {
	dst = l.Version.appendTo(dst)
	dst = appendShortString(dst, l.Token)
	return appendContext(dst, l.Context)
}

// Decode decodes the fields and ignores trailing bytes after the context.
func (l *LoginRegisterWithPAT) Decode(src []byte) error {
	r := newReader(src)
	l.Version.read(&r)
	l.readCredentials(&r)
	return r.done()
}

// DecodeCredentials decodes the part after the version prefix as the PAT
// shape, ignoring trailing bytes after the context.
func (l *LoginRegisterWithPAT) DecodeCredentials(rest []byte) error {
	r := newReader(rest)
	l.readCredentials(&r)
	return r.err
}

func (l *LoginRegisterWithPAT) readCredentials(r *reader) {
	l.Token = r.shortString()
	l.Context = r.context()
}

// LoginRegisterReply is the payload of a successful login-register reply,
// after the result section: [user_id u32][session u64]
// [server_protocol_version u32][server_version Name].
type LoginRegisterReply struct {
	UserID                uint32
	Session               uint64
	ServerProtocolVersion uint32
	ServerVersion         string
}

// AppendTo appends the payload (without the result section).
func (l *LoginRegisterReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, l.UserID)
	dst = appendU64(dst, l.Session)
	dst = appendU32(dst, l.ServerProtocolVersion)
	return appendName(dst, l.ServerVersion)
}

// Decode decodes the payload; a zero session is refused (clients reject it).
func (l *LoginRegisterReply) Decode(src []byte) error {
	r := newReader(src)
	l.UserID = r.u32()
	l.Session = r.u64()
	l.ServerProtocolVersion = r.u32()
	l.ServerVersion = r.name()
	if r.err == nil && l.Session == 0 {
		return ErrInvalidCommand
	}
	return r.finish()
}

// appendShortString appends [len u8][bytes] for passwords and tokens,
// which may be empty; longer than 255 bytes is truncated.
func appendShortString(dst []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// Empty is the body of requests and replies that carry nothing (PING,
// GET_STREAMS, LOGOUT, most metadata success payloads). It decodes only
// from an empty slice: that is the reply rule the SDK checks. A server
// does not decode an empty request body with it; it ignores whatever
// bytes such a request carries, as the reference does (a prefix of no
// fields).
type Empty struct{}

// AppendTo appends nothing.
func (Empty) AppendTo(dst []byte) []byte { return dst }

// Decode accepts only an empty body.
func (Empty) Decode(src []byte) error {
	if len(src) != 0 {
		return ErrInvalidCommand
	}
	return nil
}
