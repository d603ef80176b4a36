package cli

import (
	"crypto/tls"

	"github.com/iggo-dev/iggo/client"
	clientquic "github.com/iggo-dev/iggo/client/quic"
	clientws "github.com/iggo-dev/iggo/client/ws"
)

// resolveTransport checks the transport, takes it from a connection
// string in Addr when none was chosen, and fills the transport's default
// address when none was given.
func (t *target) resolveTransport() error {
	if client.IsConnectionString(t.Addr) {
		cs, err := client.ParseConnectionString(t.Addr)
		if err != nil {
			return usagef("--addr: %v", err)
		}
		if t.Transport == "" {
			t.Transport = cs.Transport
		} else if t.Transport != cs.Transport {
			return usagef("--transport %s does not match the connection string's %s", t.Transport, cs.Transport)
		}
	}
	switch t.Transport {
	case "", client.SchemeTCP:
		t.Transport = client.SchemeTCP
		if t.Addr == "" {
			t.Addr = DefaultAddr
		}
	case client.SchemeQUIC:
		if t.Addr == "" {
			t.Addr = DefaultQUICAddr
		}
	case client.SchemeWS:
		if t.Addr == "" {
			t.Addr = DefaultWebSocketAddr
		}
	default:
		return usagef("--transport %q: want tcp, quic or ws", t.Transport)
	}
	return nil
}

// clientTransport is the SDK transport of t (nil for TCP).
func (t *target) clientTransport() client.Transport {
	switch t.Transport {
	case client.SchemeQUIC:
		return clientquic.Transport{}
	case client.SchemeWS:
		return clientws.Transport{}
	}
	return nil
}

// credsInAddr reports whether Addr is a connection string carrying
// credentials; they are then used instead of the username/password
// layers.
func (t *target) credsInAddr() bool {
	if !client.IsConnectionString(t.Addr) {
		return false
	}
	cs, err := client.ParseConnectionString(t.Addr)
	return err == nil && (cs.Username != "" || cs.Token != "")
}

// quicUnverifiedNote is printed on standard error when a QUIC connection
// does not verify the server certificate.
const quicUnverifiedNote = "iggo: note: QUIC without --tls or --tls-ca does not verify the server certificate (the Iggy default, for the server's self-signed certificate); --tls-insecure hides this note"

// quicUnverified reports whether t connects over QUIC without verifying
// the server certificate because nothing asked for TLS settings (tc is
// t's TLS configuration, nil when none): as the reference SDK does, the
// QUIC transport then accepts any certificate. --tls-insecure, which
// asks for exactly that, is not reported.
func (t *target) quicUnverified(tc *tls.Config) bool {
	if t.Transport != client.SchemeQUIC || tc != nil {
		return false
	}
	if client.IsConnectionString(t.Addr) {
		cs, err := client.ParseConnectionString(t.Addr)
		return err == nil && cs.TLS == nil
	}
	return true
}
