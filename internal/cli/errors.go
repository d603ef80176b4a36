package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// Exit codes of the iggo command line. They are part of the CLI's
// contract (documented in the README and `iggo --help`), so scripts can
// tell a refused request from a typo or an unreachable server.
const (
	// ExitOK is success.
	ExitOK = 0
	// ExitError is a general failure, including every error the server
	// answered with (the message names it, e.g. StreamIdNotFound).
	ExitError = 1
	// ExitUsage is a command-line mistake: unknown command or flag, wrong
	// number of arguments, a value that does not parse.
	ExitUsage = 2
	// ExitConnection means the server could not be reached or the
	// connection failed: refused, TLS handshake, lost connection, timeout.
	ExitConnection = 3
	// ExitAuth means the server refused the login (bad credentials or
	// token, inactive user).
	ExitAuth = 4
	// ExitInterrupted is an interrupted command (SIGINT/SIGTERM) that had
	// not finished; `poll --follow` ends with ExitOK instead.
	ExitInterrupted = 130
)

// usageError is a command-line mistake (ExitUsage).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// connError marks a failure to reach or talk to the server (ExitConnection).
type connError struct {
	addr string
	err  error
}

func (e *connError) Error() string { return "cannot connect to " + e.addr + ": " + e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// wrapf adds context to err ("get stream orders: ..."); nil stays nil.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &opError{op: fmt.Sprintf(format, args...), err: err}
}

// opError is an error with the CLI operation that failed.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// hintedError adds an explanation to a server error.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() + ": " + e.hint }
func (e *hintedError) Unwrap() error { return e.err }

// replicationHint explains InvalidReplicationFactor (2018), whose
// reason the server only logs.
func replicationHint(err error) error {
	if we, ok := errors.AsType[*wire.Error](err); ok && we.Code == wire.ErrInvalidReplicationFactor.Code {
		return &hintedError{err: err, hint: "replication_factor is more than the cluster's live nodes (a single node accepts only 1)"}
	}
	return err
}

// exitCode classifies err.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		return ExitUsage
	}
	if isCobraUsage(err) {
		return ExitUsage
	}
	if ev, ok := errors.AsType[*wire.EvictionError](err); ok {
		switch ev.Reason {
		case wire.EvictInvalidCredentials, wire.EvictInvalidToken, wire.EvictUserInactive:
			return ExitAuth
		}
		return ExitConnection
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	if isConnectionError(err) {
		return ExitConnection
	}
	return ExitError
}

// isCobraUsage recognizes the argument and command errors cobra builds
// itself (it has no error types for them).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument ", "required flag(s) ", "accepts ", "requires at least", "requires at most", "invalid argument", "if any flags in the group"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// isConnectionError reports transport-level failures.
func isConnectionError(err error) bool {
	if _, ok := errors.AsType[*connError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*client.ConnError](err); ok {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, wire.ErrDisconnected) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return true
	}
	_, ok := errors.AsType[tls.RecordHeaderError](err)
	return ok
}

// errorLine renders err as the single line printed after "iggo: ". A
// server error reads "<what the CLI did>: <ErrorName> (error <code>)",
// e.g. "get stream orders: StreamIdNotFound (error 1009)".
func errorLine(err error, timeout string) string {
	var b strings.Builder
	if op, ok := errors.AsType[*opError](err); ok {
		b.WriteString(op.op)
		b.WriteString(": ")
		err = op.err
	}
	if ce, ok := errors.AsType[*connError](err); ok {
		b.WriteString("cannot connect to " + ce.addr + ": ")
		err = ce.err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		b.WriteString("timed out")
		if timeout != "" {
			b.WriteString(" after " + timeout + " (raise --timeout)")
		}
	case isLostConnection(err):
		ce, _ := errors.AsType[*client.ConnError](err)
		b.WriteString("connection lost")
		if ce.Err != nil {
			b.WriteString(": " + ce.Err.Error())
		}
	case isEviction(err):
		ev, _ := errors.AsType[*wire.EvictionError](err)
		b.WriteString(evictionLine(ev))
	case isWireError(err):
		we, _ := errors.AsType[*wire.Error](err)
		b.WriteString(we.Name + " (error " + strconv.FormatUint(uint64(we.Code), 10) + ")")
	default:
		b.WriteString(err.Error())
	}
	// A multi-line message ("invalid configuration:\n<problem>\n<problem>")
	// becomes "invalid configuration: <problem>; <problem>".
	line := strings.ReplaceAll(b.String(), ":\n", ": ")
	return strings.Join(strings.Fields(strings.ReplaceAll(line, "\n", "; ")), " ")
}

// isProtocolError reports a reply that breaks the protocol, such as TLS
// bytes where a frame was expected.
func isProtocolError(err error) bool {
	_, ok := errors.AsType[*client.ProtocolError](err)
	return ok
}

func isLostConnection(err error) bool {
	_, ok := errors.AsType[*client.ConnError](err)
	return ok
}

func isEviction(err error) bool {
	_, ok := errors.AsType[*wire.EvictionError](err)
	return ok
}

// isWireError reports an IggyError that is not a transport failure in
// disguise (ConnError matches wire.ErrDisconnected).
func isWireError(err error) bool {
	if _, ok := errors.AsType[*client.ConnError](err); ok {
		return false
	}
	if _, ok := errors.AsType[*client.ProtocolError](err); ok {
		return false
	}
	_, ok := errors.AsType[*wire.Error](err)
	return ok
}

// evictionLine describes an eviction: a refused login as the error it
// maps to ("refused: InvalidCredentials (error 42)"), any other as the
// session ending ("evicted by the server: StaleClient (error 30)").
func evictionLine(ev *wire.EvictionError) string {
	reason := strings.TrimPrefix(ev.Error(), "session evicted: ")
	we, ok := errors.AsType[*wire.Error](ev.Unwrap())
	if !ok {
		return "evicted by the server: " + reason
	}
	code := "error " + strconv.FormatUint(uint64(we.Code), 10)
	switch ev.Reason {
	case wire.EvictInvalidCredentials, wire.EvictInvalidToken, wire.EvictUserInactive:
		return "refused: " + we.Name + " (" + code + ")"
	}
	if we.Name == ev.Reason.String() {
		return "evicted by the server: " + reason + " (" + code + ")"
	}
	return "evicted by the server: " + reason + " (" + we.Name + ", " + code + ")"
}
