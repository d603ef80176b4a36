package wire

// EvictionReason is the byte at offset 255 of an EvictionHeader
// (framing.md, errors.md "Eviction reasons"). 0 is reserved and never sent.
type EvictionReason uint8

// Eviction reasons of protocol 0.11.0.
const (
	EvictNoSession               EvictionReason = 1
	EvictClientReleaseTooLow     EvictionReason = 2
	EvictClientReleaseTooHigh    EvictionReason = 3
	EvictInvalidRequestOperation EvictionReason = 4
	EvictInvalidRequestBody      EvictionReason = 5
	EvictInvalidRequestBodySize  EvictionReason = 6
	EvictSessionTooLow           EvictionReason = 7
	EvictSessionReleaseMismatch  EvictionReason = 8
	EvictInvalidCredentials      EvictionReason = 9
	EvictInvalidToken            EvictionReason = 10
	EvictUserInactive            EvictionReason = 11
	EvictSessionError            EvictionReason = 12
	EvictStaleClient             EvictionReason = 13
	EvictIncompatibleProtocol    EvictionReason = 14
	EvictMalformedLogin          EvictionReason = 15
)

var evictionNames = [...]string{
	"Reserved", "NoSession", "ClientReleaseTooLow", "ClientReleaseTooHigh", "InvalidRequestOperation",
	"InvalidRequestBody", "InvalidRequestBodySize", "SessionTooLow", "SessionReleaseMismatch",
	"InvalidCredentials", "InvalidToken", "UserInactive", "SessionError", "StaleClient",
	"IncompatibleProtocol", "MalformedLogin",
}

// String returns the reason's upstream name.
func (r EvictionReason) String() string {
	if int(r) < len(evictionNames) {
		return evictionNames[r]
	}
	return "EvictionReason(" + itoa(uint64(r)) + ")"
}

// Code is the IggyError code the official SDKs surface for this reason
// (framing.md, "SDK mapping"): 9->42, 10->53, 13->30, 14->14003, 15->4,
// 1/7/8/11/12->40, anything else->3.
func (r EvictionReason) Code() uint32 {
	switch r {
	case EvictInvalidCredentials:
		return ErrInvalidCredentials.Code
	case EvictInvalidToken:
		return ErrInvalidPersonalAccessToken.Code
	case EvictStaleClient:
		return ErrStaleClient.Code
	case EvictIncompatibleProtocol:
		return ErrIncompatibleProtocolVersion.Code
	case EvictMalformedLogin:
		return ErrInvalidFormat.Code
	case EvictNoSession, EvictSessionTooLow, EvictSessionReleaseMismatch, EvictUserInactive, EvictSessionError:
		return ErrUnauthenticated.Code
	}
	return ErrInvalidCommand.Code
}

// EvictionError reports that the server evicted the session. It matches
// (errors.Is) the IggyError sentinel the SDKs map the reason to, e.g.
// ErrInvalidCredentials for reason 9.
type EvictionError struct {
	Reason EvictionReason
	// ServerProtocolVersion and ServerProtocolVersionMin are the accepted
	// window, set for reason 14.
	ServerProtocolVersion    uint32
	ServerProtocolVersionMin uint32
}

// Error implements the error interface.
func (e *EvictionError) Error() string {
	s := "session evicted: " + e.Reason.String()
	if e.Reason == EvictIncompatibleProtocol {
		s += " (server accepts " + FormatVersion(e.ServerProtocolVersionMin) + " to " + FormatVersion(e.ServerProtocolVersion) + ")"
	}
	return s
}

// Unwrap returns the mapped IggyError so errors.Is(err, ErrStaleClient) works.
func (e *EvictionError) Unwrap() error {
	if e.Reason == EvictIncompatibleProtocol && (e.ServerProtocolVersionMin == 0 || e.ServerProtocolVersionMin > e.ServerProtocolVersion) {
		return ErrUnauthenticated
	}
	return ErrorForCode(e.Reason.Code())
}

// Err returns the eviction as an *EvictionError.
func (h *EvictionHeader) Err() *EvictionError {
	return &EvictionError{Reason: h.Reason, ServerProtocolVersion: h.ServerProtocolVersion, ServerProtocolVersionMin: h.ServerProtocolVersionMin}
}
