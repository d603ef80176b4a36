package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Sizes of the sealed form (ops.md §5).
const (
	// KeySize is the AES-256 key length in bytes.
	KeySize = 32
	// NonceSize is the GCM nonce length prepended to every section.
	NonceSize = 12
	// TagSize is the GCM authentication tag appended to every section.
	TagSize = 16
	// Overhead is what sealing adds to one section.
	Overhead = NonceSize + TagSize
)

// fingerprintLabel is the fixed message whose HMAC under the key is the
// key fingerprint.
const fingerprintLabel = "iggo encryption at rest: key fingerprint v1"

// fingerprintBytes is how much of the HMAC-SHA256 the fingerprint keeps.
const fingerprintBytes = 16

// Errors of the cipher and the batch transforms.
var (
	// ErrKey is a key that is not the standard base64 of 32 bytes.
	ErrKey = errors.New("encryption: bad key")
	// ErrAuth is a section that does not authenticate: the data was
	// sealed under another key or has been modified.
	ErrAuth = errors.New("encryption: message authentication failed (wrong key or modified data)")
	// ErrLayout is a batch whose layout is not a sealable or a sealed
	// batch (bad framing, a sealed section shorter than nonce and tag, a
	// length that would overflow).
	ErrLayout = errors.New("encryption: malformed batch")
)

// KeyHint is how an operator makes a valid key.
const KeyHint = "generate one with `openssl rand -base64 32`"

// ParseKey decodes a configured key: the standard base64 (with padding)
// of exactly KeySize bytes; surrounding white space is ignored. The error
// says what is wrong without repeating the key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: must be set to the standard base64 of %d bytes; %s", ErrKey, KeySize, KeyHint)
	}
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: must be the standard base64 of %d bytes (it is not valid standard base64); %s", ErrKey, KeySize, KeyHint)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: must be the standard base64 of %d bytes (got %d bytes); %s", ErrKey, KeySize, len(key), KeyHint)
	}
	return key, nil
}

// GenerateKey returns a new random key in the configured form (standard
// base64 of KeySize bytes).
func GenerateKey() (string, error) {
	var k [KeySize]byte
	if _, err := rand.Read(k[:]); err != nil {
		return "", fmt.Errorf("generate key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(k[:]), nil
}

// Cipher seals and opens sections and batches under one key.
type Cipher struct {
	aead        cipher.AEAD
	fingerprint string
	// bufs recycles batch-sized buffers (GetBuffer/PutBuffer) and nonce
	// scratch.
	bufs   sync.Pool
	nonces sync.Pool
}

// New returns a Cipher for a KeySize-byte key.
func New(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: need %d bytes, got %d", ErrKey, KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(fingerprintLabel))
	return &Cipher{aead: aead, fingerprint: hex.EncodeToString(mac.Sum(nil)[:fingerprintBytes])}, nil
}

// NewFromBase64 parses a configured key (ParseKey) and returns its Cipher.
func NewFromBase64(s string) (*Cipher, error) {
	key, err := ParseKey(s)
	if err != nil {
		return nil, err
	}
	return New(key)
}

// Fingerprint identifies the key without revealing it: the hex of the
// first 16 bytes of HMAC-SHA256(key, a fixed label). Data records it so a
// different key is recognised before anything is served.
func (c *Cipher) Fingerprint() string { return c.fingerprint }

// Seal appends nonce ‖ ciphertext ‖ tag of plaintext to dst, with a fresh
// random nonce. dst and plaintext must not overlap.
func (c *Cipher) Seal(dst, plaintext []byte) ([]byte, error) {
	var nonce [NonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return dst, fmt.Errorf("encryption: nonce: %w", err)
	}
	return c.seal(dst, nonce[:], plaintext), nil
}

// seal appends nonce ‖ Seal(plaintext) to dst.
func (c *Cipher) seal(dst, nonce, plaintext []byte) []byte {
	dst = append(dst, nonce...)
	return c.aead.Seal(dst, nonce, plaintext, nil)
}

// Open appends the plaintext of a sealed section (nonce ‖ ciphertext ‖
// tag) to dst. A section shorter than Overhead is ErrLayout; one that does
// not authenticate is ErrAuth. dst and sealed must not overlap.
func (c *Cipher) Open(dst, sealed []byte) ([]byte, error) {
	if len(sealed) < Overhead {
		return dst, ErrLayout
	}
	out, err := c.aead.Open(dst, sealed[:NonceSize], sealed[NonceSize:], nil)
	if err != nil {
		return dst, ErrAuth
	}
	return out, nil
}
