package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iggo-dev/iggo/client"
)

// maxTLSProbe bounds the second connection that checks whether a failed
// connection was a TLS setting that does not match the server's.
const maxTLSProbe = 3 * time.Second

// The layers that can turn TLS on (target.tlsFrom).
const (
	tlsFromContext = "context"
	tlsFromEnv     = "env"
	tlsFromFlags   = "flags"
)

// tlsMismatchError says that the client's TLS setting does not match the
// server: serverTLS is true when the server speaks TLS and the client did
// not.
type tlsMismatchError struct {
	serverTLS bool
	// context is the saved context in use, from the layer that turned
	// TLS on (tlsFrom*), connString whether the connection string's
	// tls=true did.
	context, from string
	connString    bool
}

func (e *tlsMismatchError) Error() string {
	if e.serverTLS {
		msg := "the server speaks TLS: add --tls (with --tls-ca FILE, or --tls-insecure for a self-signed certificate)"
		if e.context != "" {
			msg += "; context " + strconv.Quote(e.context) + " does not turn TLS on (save it again with --tls: iggo context create " + e.context + " --force ...)"
		}
		return msg
	}
	switch {
	case e.connString:
		return "the server is not speaking TLS: drop tls=true from the connection string"
	case e.from == tlsFromContext:
		return "the server is not speaking TLS: context " + strconv.Quote(e.context) + " turns TLS on (save it again without the --tls flags: iggo context create " + e.context + " --force ...)"
	case e.from == tlsFromEnv:
		return "the server is not speaking TLS: unset " + EnvTLS + ", " + EnvTLSCA + ", " + EnvTLSInsecure + " and " + EnvTLSServerName
	}
	return "the server is not speaking TLS: drop --tls and the --tls-* flags"
}

// tlsOrigin is where a resolved target's TLS setting came from: the
// saved context in use ("" for none) and the last layer that turned TLS
// on (tlsFrom*, "" when none did).
type tlsOrigin struct {
	context, from string
}

// tlsSource returns from when layer l turns TLS on, else "".
func tlsSource(l target, from string) string {
	if l.TLS || l.TLSCA != "" || l.TLSInsecure || l.TLSServerName != "" {
		return from
	}
	return ""
}

// explainTLSMismatch returns a tlsMismatchError (as a connError) when
// err, a failure to connect or talk to a TCP server, came from a TLS
// setting that does not match the server, and nil when it did not or
// that cannot be told. It looks at err first (a TLS handshake answered by
// a record that is not TLS) and otherwise opens one more connection,
// bounded by maxTLSProbe: a TLS handshake when the client spoke plain
// TCP, a PING over plain TCP when the client spoke TLS.
func (a *app) explainTLSMismatch(ctx context.Context, err error) error {
	t := a.dialed
	if t == nil || t.Transport != client.SchemeTCP || ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil // nothing listens there
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return nil
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return nil // TLS works; the certificate is the problem
	}
	addr, tlsOn, connString := t.Addr, t.TLS, false
	if client.IsConnectionString(addr) {
		cs, perr := client.ParseConnectionString(addr)
		if perr != nil {
			return nil
		}
		addr = cs.Addr
		if cs.TLS != nil {
			tlsOn, connString = true, true
		}
	} else if first, _, ok := strings.Cut(addr, ","); ok {
		addr = strings.TrimSpace(first)
	}
	mismatch := &connError{addr: addr, err: &tlsMismatchError{serverTLS: !tlsOn, context: a.origin.context, from: a.origin.from, connString: connString}}
	if tlsOn {
		if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
			return mismatch
		}
	}
	bound := maxTLSProbe
	if a.timeout > 0 && a.timeout < bound {
		bound = a.timeout
	}
	pctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if tlsOn && answersPlainPing(pctx, addr) || !tlsOn && speaksTLS(pctx, addr) {
		return mismatch
	}
	return nil
}

// speaksTLS reports whether the server at addr answers a TLS handshake
// with TLS (a completed handshake or a TLS alert). The certificate is not
// checked: only the protocol matters here.
func speaksTLS(ctx context.Context, addr string) bool {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true, ServerName: host, MinVersion: tls.VersionTLS12}) //nolint:gosec // a protocol probe, no data is sent
	err = tc.HandshakeContext(ctx)
	if err == nil {
		return true
	}
	_, alert := errors.AsType[tls.AlertError](err)
	return alert
}

// answersPlainPing reports whether the server at addr answers a PING
// over plain TCP.
func answersPlainPing(ctx context.Context, addr string) bool {
	c, err := client.Dial(ctx, addr, client.WithSDKInfo(sdkName, client.DefaultSDKVersion), client.WithReconnect(client.ReconnectPolicy{Disabled: true}))
	if err != nil {
		return false
	}
	defer c.Close()
	return c.Ping(ctx) == nil
}

// tlsWatchDelay is how long the first exchange over plain TCP may go
// unanswered before a second connection checks whether the server speaks
// TLS: a TLS server may wait for the rest of what it takes for a TLS
// record instead of closing, which would otherwise last until --timeout.
const tlsWatchDelay = 500 * time.Millisecond

// watchPlainTLS returns ctx, ended early with a tlsMismatchError cause
// when the first exchange with t is not answered within tlsWatchDelay and
// the server turns out to speak TLS, and stop, which ends the watch and
// returns that error (nil when none). Targets using TLS or another
// transport, and exchanges after the first, are not watched.
func (a *app) watchPlainTLS(ctx context.Context, t *target) (context.Context, func() error) {
	if !a.unanswered || t.Transport != client.SchemeTCP || t.TLS || client.IsConnectionString(t.Addr) {
		return ctx, func() error { return nil }
	}
	a.unanswered = false
	addr, _, _ := strings.Cut(t.Addr, ",")
	addr = strings.TrimSpace(addr)
	wctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(tlsWatchDelay, func() {
		pctx, done := context.WithTimeout(wctx, maxTLSProbe)
		defer done()
		if speaksTLS(pctx, addr) {
			cancel(&connError{addr: addr, err: &tlsMismatchError{serverTLS: true, context: a.origin.context}})
		}
	})
	return wctx, func() error {
		timer.Stop()
		cause := context.Cause(wctx)
		cancel(nil)
		if _, ok := errors.AsType[*tlsMismatchError](cause); ok {
			return cause
		}
		return nil
	}
}
