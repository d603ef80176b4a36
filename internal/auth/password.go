package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are Argon2id cost parameters.
type Params struct {
	// MemoryKiB is the memory cost m in KiB.
	MemoryKiB uint32
	// Iterations is the time cost t.
	Iterations uint32
	// Parallelism is p.
	Parallelism uint8
	// SaltBytes and KeyBytes are the salt and output lengths.
	SaltBytes uint32
	KeyBytes  uint32
}

// DefaultParams are the Rust argon2 crate defaults the reference uses
// (semantics.md §2.2): v=19, m=19456 KiB, t=2, p=1, 16-byte salt,
// 32-byte output.
var DefaultParams = Params{MemoryKiB: 19456, Iterations: 2, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}

// Bounds on parameters read back from a stored PHC string, so a corrupt
// or hostile hash cannot make verification allocate without limit.
const (
	maxMemoryKiB  = 1 << 20
	maxIterations = 64
	minSaltBytes  = 8
	maxSaltBytes  = 64
	minKeyBytes   = 16
	maxKeyBytes   = 64
	maxPHCBytes   = 256
)

// ErrBadHash reports a stored password hash that is not an Argon2id PHC
// string within the accepted bounds.
var ErrBadHash = errors.New("auth: malformed argon2id hash")

// Hasher hashes and verifies passwords. It bounds the number of Argon2
// computations running at once (each holds MemoryKiB of memory) so a flood
// of logins queues instead of exhausting memory.
type Hasher struct {
	params Params
	rand   io.Reader
	slots  chan struct{}
}

// NewHasher returns a Hasher using p for new hashes, reading salts from
// r (crypto/rand.Reader when nil).
func NewHasher(p Params, r io.Reader) *Hasher {
	if r == nil {
		r = rand.Reader
	}
	h := &Hasher{params: p, rand: r, slots: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}
	return h
}

// Params returns the parameters used for new hashes.
func (h *Hasher) Params() Params { return h.params }

// Hash returns the PHC string of password with a fresh random salt:
// $argon2id$v=19$m=M,t=T,p=P$salt$hash (unpadded standard base64).
func (h *Hasher) Hash(password string) (string, error) {
	salt := make([]byte, h.params.SaltBytes)
	if _, err := io.ReadFull(h.rand, salt); err != nil {
		return "", err
	}
	h.slots <- struct{}{}
	key := argon2.IDKey([]byte(password), salt, h.params.Iterations, h.params.MemoryKiB, h.params.Parallelism, h.params.KeyBytes)
	<-h.slots
	return formatPHC(h.params, salt, key), nil
}

func formatPHC(p Params, salt, key []byte) string {
	var b strings.Builder
	b.WriteString("$argon2id$v=19$m=")
	b.WriteString(strconv.FormatUint(uint64(p.MemoryKiB), 10))
	b.WriteString(",t=")
	b.WriteString(strconv.FormatUint(uint64(p.Iterations), 10))
	b.WriteString(",p=")
	b.WriteString(strconv.FormatUint(uint64(p.Parallelism), 10))
	b.WriteByte('$')
	b.WriteString(base64.RawStdEncoding.EncodeToString(salt))
	b.WriteByte('$')
	b.WriteString(base64.RawStdEncoding.EncodeToString(key))
	return b.String()
}

// ParsePHC decodes an Argon2id PHC string into its parameters, salt and
// key, enforcing the bounds above.
func ParsePHC(s string) (Params, []byte, []byte, error) {
	if len(s) > maxPHCBytes {
		return Params{}, nil, nil, ErrBadHash
	}
	parts := strings.Split(s, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return Params{}, nil, nil, ErrBadHash
	}
	var p Params
	seen := 0
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Params{}, nil, nil, ErrBadHash
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return Params{}, nil, nil, ErrBadHash
		}
		switch k {
		case "m":
			p.MemoryKiB, seen = uint32(n), seen|1
		case "t":
			p.Iterations, seen = uint32(n), seen|2
		case "p":
			if n > 255 {
				return Params{}, nil, nil, ErrBadHash
			}
			p.Parallelism, seen = uint8(n), seen|4
		default:
			return Params{}, nil, nil, ErrBadHash
		}
	}
	if seen != 7 || p.Iterations < 1 || p.Iterations > maxIterations || p.Parallelism < 1 ||
		p.MemoryKiB < 8*uint32(p.Parallelism) || p.MemoryKiB > maxMemoryKiB {
		return Params{}, nil, nil, ErrBadHash
	}
	salt, err := base64.RawStdEncoding.Strict().DecodeString(parts[4])
	if err != nil || len(salt) < minSaltBytes || len(salt) > maxSaltBytes {
		return Params{}, nil, nil, ErrBadHash
	}
	key, err := base64.RawStdEncoding.Strict().DecodeString(parts[5])
	if err != nil || len(key) < minKeyBytes || len(key) > maxKeyBytes {
		return Params{}, nil, nil, ErrBadHash
	}
	p.SaltBytes, p.KeyBytes = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}

// Verify reports whether password matches the PHC string phc, comparing
// in constant time. A malformed phc returns ErrBadHash.
func (h *Hasher) Verify(phc, password string) (bool, error) {
	p, salt, key, err := ParsePHC(phc)
	if err != nil {
		return false, err
	}
	h.slots <- struct{}{}
	got := argon2.IDKey([]byte(password), salt, p.Iterations, p.MemoryKiB, p.Parallelism, uint32(len(key)))
	<-h.slots
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// VerifyDummy spends the time of one verification against a fixed hash
// with the hasher's parameters; login runs it for unknown users so that
// response time does not reveal which usernames exist.
func (h *Hasher) VerifyDummy(password string) {
	h.slots <- struct{}{}
	salt := make([]byte, h.params.SaltBytes)
	_ = argon2.IDKey([]byte(password), salt, h.params.Iterations, h.params.MemoryKiB, h.params.Parallelism, h.params.KeyBytes)
	<-h.slots
}
