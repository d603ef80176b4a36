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
	return generateCert(now, certSpec{
		commonName:   host,
		organization: []string{"iggo self-signed"},
		dnsNames:     []string{host},
		ips:          []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		usage:        []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// certSpec is what a generated certificate names and may be used for.
type certSpec struct {
	commonName   string
	organization []string
	dnsNames     []string
	ips          []net.IP
	usage        []x509.ExtKeyUsage
}

// generateCert makes a self-signed ECDSA P-256 certificate for spec, valid
// from a minute before now for selfSignedValidity: the one certificate
// generator of the server (client listeners and replica ports).
func generateCert(now time.Time, spec certSpec) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.commonName, Organization: spec.organization},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  spec.usage,
		DNSNames:     spec.dnsNames,
		IPAddresses:  spec.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parse certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
