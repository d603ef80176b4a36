package client

import (
	"errors"
	"strings"

	"github.com/iggo-dev/iggo/wire"
)

// ErrClosed is returned by calls on a Client after Close. It matches
// wire.ErrClientShutdown.
var ErrClosed = wire.ErrClientShutdown

// ConnError reports that a request could not be completed because the
// connection broke and was not (or could not be) replaced. It matches
// wire.ErrDisconnected under errors.Is and unwraps to the cause.
type ConnError struct {
	// Err is the transport or dial error.
	Err error
}

// Error implements the error interface.
func (e *ConnError) Error() string {
	if e.Err == nil {
		return "client: disconnected"
	}
	return "client: disconnected: " + e.Err.Error()
}

// Unwrap returns wire.ErrDisconnected and the cause.
func (e *ConnError) Unwrap() []error { return []error{wire.ErrDisconnected, e.Err} }

// ProtocolError reports a frame from the server that breaks the protocol
// (framing.md, "Client decode order"): an unknown frame kind, a size out
// of bounds, a reply whose request number does not match the request in
// flight, an undeclared reply operation or an undecodable payload. It
// matches wire.ErrInvalidCommand, the code the official SDKs use.
type ProtocolError struct {
	Reason string
}

// Error implements the error interface.
func (e *ProtocolError) Error() string { return "client: protocol violation: " + e.Reason }

// Unwrap returns wire.ErrInvalidCommand.
func (e *ProtocolError) Unwrap() error { return wire.ErrInvalidCommand }

// CommandError attaches the command to an error returned by the server
// or the reply decoder; errors.Is and errors.As see through it to the
// wire error (e.g. wire.ErrStreamIDNotFound) or *wire.EvictionError.
type CommandError struct {
	Command wire.Command
	Err     error
}

// Error implements the error interface, e.g.
// "create_stream: iggy error 1012 (StreamNameAlreadyExists)".
func (e *CommandError) Error() string {
	return strings.ToLower(e.Command.String()) + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *CommandError) Unwrap() error { return e.Err }

// wrapCmd attaches code to err unless err is nil, a context error or a
// client-state error, which already say what happened.
func wrapCmd(code wire.Command, err error) error {
	if err == nil || errors.Is(err, ErrClosed) {
		return err
	}
	if _, ok := errors.AsType[*CommandError](err); ok {
		return err
	}
	return &CommandError{Command: code, Err: err}
}

// isTransient reports whether err is a transient rejection the protocol
// says to retry with the same request (57, 58).
func isTransient(err error) bool {
	return errors.Is(err, wire.ErrTransientNotCommitted) || errors.Is(err, wire.ErrTransientNotAccepted)
}

// terminalLoginError reports whether a login failure cannot be cured by
// trying again (bad credentials, incompatible protocol, malformed body).
func terminalLoginError(err error) bool {
	if ev, ok := errors.AsType[*wire.EvictionError](err); ok {
		switch ev.Reason {
		case wire.EvictInvalidCredentials, wire.EvictInvalidToken, wire.EvictUserInactive,
			wire.EvictIncompatibleProtocol, wire.EvictMalformedLogin:
			return true
		}
		return false
	}
	if _, ok := errors.AsType[*ProtocolError](err); ok {
		return true
	}
	_, ok := errors.AsType[*wire.Error](err)
	return ok && !isTransient(err)
}
