package broker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
)

// selfSignedValidity is the lifetime of a generated certificate.
const selfSignedValidity = 365 * 24 * time.Hour

// loadTLS returns the server TLS configuration (config.md §2): the PEM pair
// from cert_file/key_file when cert_file exists; otherwise, with
// self_signed, an ephemeral certificate for localhost.
func loadTLS(c config.TLSConfig, now func() time.Time) (*tls.Config, error) {
	_, statErr := os.Stat(c.CertFile)
	var cert tls.Certificate
	var err error
	switch {
	case statErr == nil:
		cert, err = tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load certificate: %w", err)
		}
	case c.SelfSigned && errors.Is(statErr, fs.ErrNotExist):
		cert, err = SelfSigned(now(), "localhost")
		if err != nil {
			return nil, fmt.Errorf("generate self-signed certificate: %w", err)
		}
	default:
		return nil, fmt.Errorf("certificate %s: %w", c.CertFile, statErr)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// SelfSigned generates an ECDSA P-256 certificate for host, 127.0.0.1 and
// ::1, valid from now for selfSignedValidity.
func SelfSigned(now time.Time, host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host, Organization: []string{"iggo self-signed"}},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{host},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
