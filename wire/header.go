package wire

import "encoding/binary"

// Frame geometry (framing.md).
const (
	// HeaderSize is the fixed length of every frame header.
	HeaderSize = 256
	// MaxFrameSize is the largest frame the official SDKs accept (64 MiB).
	MaxFrameSize = 64 << 20
)

// Byte offsets of the header fields (framing.md tables). The first 128
// bytes are the prologue shared by all three header shapes.
const (
	offChecksum     = 0
	offChecksumBody = 16
	offCluster      = 32
	offSize         = 48
	offView         = 52
	offRelease      = 56
	offCommand      = 60
	offReplica      = 61
	prologueEnd     = 128

	// RequestHeader.
	offReqClient          = 128
	offReqRequestChecksum = 144
	offReqTimestamp       = 160
	offReqRequest         = 168
	offReqOperation       = 176
	offReqSession         = 184
	offReqUserID          = 192
	offReqCode            = 196

	// ReplyHeader.
	offRepRequestChecksum = 128
	offRepContext         = 144
	offRepClient          = 160
	offRepOp              = 176
	offRepCommit          = 184
	offRepTimestamp       = 192
	offRepRequest         = 200
	offRepOperation       = 208
	offRepStatus          = 216

	// EvictionHeader.
	offEvClient     = 128
	offEvVersionMax = 144
	offEvVersionMin = 148
	offEvReason     = 255
)

// FrameKind is the header's `command` byte at offset 60: which of the three
// header shapes the frame carries.
type FrameKind uint8

// Frame kinds seen on a client connection. Values 0..29 other than these
// are replica-to-replica consensus traffic.
const (
	KindRequest  FrameKind = 5
	KindReply    FrameKind = 8
	KindEviction FrameKind = 13
)

// String returns the kind's name.
func (k FrameKind) String() string {
	switch k {
	case KindRequest:
		return "Request"
	case KindReply:
		return "Reply"
	case KindEviction:
		return "Eviction"
	}
	return "FrameKind(" + itoa(uint64(k)) + ")"
}

// PeekSize returns the total frame length (offset 48) of the header in b.
// b must hold at least 52 bytes.
func PeekSize(b []byte) uint32 { return binary.LittleEndian.Uint32(b[offSize:]) }

// PeekKind returns the `command` byte (offset 60) of the header in b. b must
// hold at least 61 bytes.
func PeekKind(b []byte) FrameKind { return FrameKind(b[offCommand]) }

// PeekReplyStatus returns the status field of an encoded ReplyHeader
// without decoding the rest. b must hold at least HeaderSize bytes.
func PeekReplyStatus(b []byte) uint32 { return binary.LittleEndian.Uint32(b[offRepStatus:]) }

// Prologue holds the informational fields of the shared first 128 bytes.
// The two checksums are unused on client-facing frames (always 0).
type Prologue struct {
	Checksum     Uint128
	ChecksumBody Uint128
	Cluster      Uint128
	Size         uint32
	View         uint32
	Release      uint32
	Replica      uint8
}

func (p *Prologue) put(b []byte, kind FrameKind) {
	PutUint128(b[offChecksum:], p.Checksum)
	PutUint128(b[offChecksumBody:], p.ChecksumBody)
	PutUint128(b[offCluster:], p.Cluster)
	binary.LittleEndian.PutUint32(b[offSize:], p.Size)
	binary.LittleEndian.PutUint32(b[offView:], p.View)
	binary.LittleEndian.PutUint32(b[offRelease:], p.Release)
	b[offCommand] = byte(kind)
	b[offReplica] = p.Replica
}

func (p *Prologue) get(b []byte) {
	p.Checksum = GetUint128(b[offChecksum:])
	p.ChecksumBody = GetUint128(b[offChecksumBody:])
	p.Cluster = GetUint128(b[offCluster:])
	p.Size = binary.LittleEndian.Uint32(b[offSize:])
	p.View = binary.LittleEndian.Uint32(b[offView:])
	p.Release = binary.LittleEndian.Uint32(b[offRelease:])
	p.Replica = b[offReplica]
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// RequestHeader is the 256-byte client-to-server header (framing.md,
// "RequestHeader").
type RequestHeader struct {
	Prologue
	Client          Uint128
	RequestChecksum Uint128
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	Session         uint64
	UserID          uint32
	// Code is the command code in bytes 196..200, meaningful only for
	// Operation == OpNonReplicated.
	Code Command
	// ReservedNonZero is set by Decode when any reserved or padding byte
	// (62..128, 177..184, 200..256) is non-zero. It is ignored by Encode.
	ReservedNonZero bool
}

// Encode writes h into b[:HeaderSize], zeroing every reserved byte. The
// `command` byte is always KindRequest.
func (h *RequestHeader) Encode(b []byte) {
	b = b[:HeaderSize]
	clear(b)
	h.Prologue.put(b, KindRequest)
	PutUint128(b[offReqClient:], h.Client)
	PutUint128(b[offReqRequestChecksum:], h.RequestChecksum)
	binary.LittleEndian.PutUint64(b[offReqTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(b[offReqRequest:], h.Request)
	b[offReqOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint64(b[offReqSession:], h.Session)
	binary.LittleEndian.PutUint32(b[offReqUserID:], h.UserID)
	binary.LittleEndian.PutUint32(b[offReqCode:], uint32(h.Code))
}

// AppendTo appends the encoded header to dst.
func (h *RequestHeader) AppendTo(dst []byte) []byte {
	n := len(dst)
	dst = grow(dst, HeaderSize)
	h.Encode(dst[n:])
	return dst
}

// Decode reads a request header from b[:HeaderSize]. It fails only when b
// is shorter than a header or the `command` byte is not KindRequest; the
// protocol rules are checked by Validate.
func (h *RequestHeader) Decode(b []byte) error {
	if len(b) < HeaderSize {
		return ErrInvalidCommand
	}
	if FrameKind(b[offCommand]) != KindRequest {
		return ErrInvalidCommand
	}
	h.Prologue.get(b)
	h.Client = GetUint128(b[offReqClient:])
	h.RequestChecksum = GetUint128(b[offReqRequestChecksum:])
	h.Timestamp = binary.LittleEndian.Uint64(b[offReqTimestamp:])
	h.Request = binary.LittleEndian.Uint64(b[offReqRequest:])
	h.Operation = Operation(b[offReqOperation])
	h.Session = binary.LittleEndian.Uint64(b[offReqSession:])
	h.UserID = binary.LittleEndian.Uint32(b[offReqUserID:])
	h.Code = Command(binary.LittleEndian.Uint32(b[offReqCode:]))
	h.ReservedNonZero = !allZero(b[62:prologueEnd]) || !allZero(b[offReqOperation+1:offReqSession]) || !allZero(b[200:HeaderSize])
	return nil
}

// Command returns the command code the request carries: bytes 196..200 for
// NonReplicated, 39 for Logout, the implied code for replicated operations.
// Register returns 0 (40 and 45 are told apart by the body). ok is false
// when the operation implies no command.
func (h *RequestHeader) Command() (Command, bool) {
	switch h.Operation {
	case OpNonReplicated:
		return h.Code, true
	case OpRegister:
		return 0, true
	}
	info, ok := CommandForOperation(h.Operation)
	return info.Code, ok
}

// ReplyHeader is the 256-byte server-to-client answer header (framing.md,
// "ReplyHeader").
type ReplyHeader struct {
	Prologue
	RequestChecksum Uint128
	Context         Uint128
	Client          Uint128
	Op              uint64
	Commit          uint64
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	// Status is 0 or an IggyError code for a pre-commit denial (empty body).
	Status uint32
}

// Encode writes h into b[:HeaderSize], zeroing reserved bytes.
func (h *ReplyHeader) Encode(b []byte) {
	b = b[:HeaderSize]
	clear(b)
	h.Prologue.put(b, KindReply)
	PutUint128(b[offRepRequestChecksum:], h.RequestChecksum)
	PutUint128(b[offRepContext:], h.Context)
	PutUint128(b[offRepClient:], h.Client)
	binary.LittleEndian.PutUint64(b[offRepOp:], h.Op)
	binary.LittleEndian.PutUint64(b[offRepCommit:], h.Commit)
	binary.LittleEndian.PutUint64(b[offRepTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(b[offRepRequest:], h.Request)
	b[offRepOperation] = byte(h.Operation)
	binary.LittleEndian.PutUint32(b[offRepStatus:], h.Status)
}

// AppendTo appends the encoded header to dst.
func (h *ReplyHeader) AppendTo(dst []byte) []byte {
	n := len(dst)
	dst = grow(dst, HeaderSize)
	h.Encode(dst[n:])
	return dst
}

// Decode reads a reply header from b[:HeaderSize]. It fails when b is short
// or the `command` byte is not KindReply.
func (h *ReplyHeader) Decode(b []byte) error {
	if len(b) < HeaderSize {
		return ErrInvalidCommand
	}
	if FrameKind(b[offCommand]) != KindReply {
		return ErrInvalidCommand
	}
	h.Prologue.get(b)
	h.RequestChecksum = GetUint128(b[offRepRequestChecksum:])
	h.Context = GetUint128(b[offRepContext:])
	h.Client = GetUint128(b[offRepClient:])
	h.Op = binary.LittleEndian.Uint64(b[offRepOp:])
	h.Commit = binary.LittleEndian.Uint64(b[offRepCommit:])
	h.Timestamp = binary.LittleEndian.Uint64(b[offRepTimestamp:])
	h.Request = binary.LittleEndian.Uint64(b[offRepRequest:])
	h.Operation = Operation(b[offRepOperation])
	h.Status = binary.LittleEndian.Uint32(b[offRepStatus:])
	return nil
}

// EvictionHeader is the body-less, session-terminal server-to-client frame
// (framing.md, "EvictionHeader").
type EvictionHeader struct {
	Prologue
	Client Uint128
	// ServerProtocolVersion and ServerProtocolVersionMin carry the accepted
	// window for reason 14 and are zero otherwise.
	ServerProtocolVersion    uint32
	ServerProtocolVersionMin uint32
	Reason                   EvictionReason
}

// Encode writes h into b[:HeaderSize]; size is always HeaderSize.
func (h *EvictionHeader) Encode(b []byte) {
	b = b[:HeaderSize]
	clear(b)
	p := h.Prologue
	p.Size = HeaderSize
	p.put(b, KindEviction)
	PutUint128(b[offEvClient:], h.Client)
	binary.LittleEndian.PutUint32(b[offEvVersionMax:], h.ServerProtocolVersion)
	binary.LittleEndian.PutUint32(b[offEvVersionMin:], h.ServerProtocolVersionMin)
	b[offEvReason] = byte(h.Reason)
}

// AppendTo appends the encoded header to dst.
func (h *EvictionHeader) AppendTo(dst []byte) []byte {
	n := len(dst)
	dst = grow(dst, HeaderSize)
	h.Encode(dst[n:])
	return dst
}

// Decode reads an eviction header from b[:HeaderSize] and checks the
// validity rules of framing.md: size 256, client non-zero, reserved bytes
// zero, reason non-zero, and the version window set (1 <= min <= max) for
// reason 14 only. A violation returns ErrInvalidCommand.
func (h *EvictionHeader) Decode(b []byte) error {
	if len(b) < HeaderSize {
		return ErrInvalidCommand
	}
	if FrameKind(b[offCommand]) != KindEviction {
		return ErrInvalidCommand
	}
	h.Prologue.get(b)
	h.Client = GetUint128(b[offEvClient:])
	h.ServerProtocolVersion = binary.LittleEndian.Uint32(b[offEvVersionMax:])
	h.ServerProtocolVersionMin = binary.LittleEndian.Uint32(b[offEvVersionMin:])
	h.Reason = EvictionReason(b[offEvReason])
	switch {
	case h.Size != HeaderSize, h.Client.IsZero(), h.Reason == 0,
		!allZero(b[62:prologueEnd]), !allZero(b[152:offEvReason]):
		return ErrInvalidCommand
	case h.Reason == EvictIncompatibleProtocol:
		if h.ServerProtocolVersionMin == 0 || h.ServerProtocolVersionMin > h.ServerProtocolVersion {
			return ErrInvalidCommand
		}
	case h.ServerProtocolVersion != 0 || h.ServerProtocolVersionMin != 0:
		return ErrInvalidCommand
	}
	return nil
}
