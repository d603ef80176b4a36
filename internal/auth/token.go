package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io"

	"github.com/zeebo/blake3"
)

// TokenBytes is the number of random bytes in a personal access token;
// encoded with padded standard base64 it is 68 characters (semantics.md §2.6).
const TokenBytes = 50

// NewToken returns a fresh raw token: TokenBytes from r (crypto/rand when
// nil), padded standard base64.
func NewToken(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [TokenBytes]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}

// HashToken returns the stored form of a raw token: BLAKE3-256 of its
// UTF-8 bytes as lowercase hex, 64 characters (semantics.md §2.6).
func HashToken(token string) string {
	sum := blake3.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
