package httpapi

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/iggo-dev/iggo/internal/auth"
)

// DefaultMaxRevoked bounds the revoked-jti list kept here; the metadata
// plane's list has the same bound.
const DefaultMaxRevoked = auth.MaxRevokedTokens

// Revocations is the token revocation list, an Iggo addition to the
// reference (whose tokens live until exp): a logout revokes the token's
// jti until the token's exp, and a password change revokes every token of
// the user issued before the change (compared at millisecond precision
// with the time in the UUIDv7 jti) until the longest lifetime plus clock
// skew has passed.
//
// With a TokenLog (the broker's metadata plane) a logout's revocation is
// committed through it: on a single node the metadata journal keeps it,
// in cluster mode every node applies it in commit order, so the token is
// refused everywhere and after restarts. Without one (tests, tools) the
// jti is kept here.
//
// What is kept here lives in memory: the jtis revoked without a TokenLog
// (and those a file written before logouts went through the metadata log
// still holds), bounded by max revoked jtis — when full, expired entries
// are dropped first and then the entry that expires soonest (it would stop
// verifying soonest anyway) — and the password-change cut-offs. Every
// change is written to a small file (xxh3-64 of the JSON body, then the
// body; temporary file, fsync, rename), so a restart keeps them. A file
// that is missing starts an empty list; one that fails its checksum is an
// error.
type Revocations struct {
	path     string
	now      func() time.Time
	max      int
	lifetime time.Duration // how long a user cut-off must be kept
	skew     time.Duration // how long past exp a token still verifies
	log      TokenLog      // nil: logouts are kept here

	mu    sync.Mutex
	jtis  map[string]int64      // jti -> token exp (unix s); guarded by mu
	users map[auth.UserID]int64 // user -> cut-off (unix ms); guarded by mu
}

// TokenLog is the durable record of logout revocations shared by every
// node: the metadata plane (metadata.Store), where a revocation is one
// committed entry.
type TokenLog interface {
	// RevokeToken commits the revocation of user's token jti, kept until
	// the unix second until, and returns once it applied on this node.
	// On failure code is the binary protocol's result code (58: never
	// admitted, 57: outcome unknown) and err says why; code is 0 on
	// success.
	RevokeToken(user auth.UserID, jti string, until int64) (code uint32, err error)
	// TokenRevoked reports whether jti is revoked. It is called on every
	// request that carries a JWT and must not allocate.
	TokenRevoked(jti string) bool
}

// revocationFile is the persisted form.
type revocationFile struct {
	JTIs  map[string]int64 `json:"jtis"`
	Users map[string]int64 `json:"users"`
}

// OpenRevocations loads the list at path ("" keeps it in memory only).
// lifetime is the longest token lifetime plus the clock skew; skew is the
// verifier's leeway; log, when not nil, takes the logouts' revocations.
func OpenRevocations(path string, now func() time.Time, max int, lifetime, skew time.Duration, log TokenLog) (*Revocations, error) {
	if now == nil {
		now = time.Now
	}
	if max <= 0 {
		max = DefaultMaxRevoked
	}
	r := &Revocations{path: path, now: now, max: max, lifetime: lifetime, skew: skew, log: log, jtis: map[string]int64{}, users: map[auth.UserID]int64{}}
	if path == "" {
		return r, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read revocations: %w", err)
	}
	if len(data) < 8 || binary.LittleEndian.Uint64(data) != xxh3.Hash(data[8:]) {
		return nil, fmt.Errorf("revocations file %s: checksum mismatch", path)
	}
	var f revocationFile
	if err := json.Unmarshal(data[8:], &f); err != nil {
		return nil, fmt.Errorf("revocations file %s: %w", path, err)
	}
	for k, v := range f.JTIs {
		r.jtis[k] = v
	}
	for k, v := range f.Users {
		var id uint32
		if _, err := fmt.Sscanf(k, "%d", &id); err == nil {
			r.users[auth.UserID(id)] = v
		}
	}
	r.sweepLocked()
	return r, nil
}

// Revoked reports whether a verified token is revoked: its jti is kept
// here or in the TokenLog, or its user's password changed here after it
// was issued. It allocates nothing.
func (r *Revocations) Revoked(c Claims) bool {
	r.mu.Lock()
	_, local := r.jtis[c.JTI]
	cut, ok := r.users[c.User]
	r.mu.Unlock()
	if local || ok && c.IssuedMillis <= cut {
		return true
	}
	return r.log != nil && r.log.TokenRevoked(c.JTI)
}

// RevokeToken revokes user's token jti until its exp (plus the clock
// skew). With a TokenLog it is committed there: a non-zero code is the
// binary protocol's result code of a revocation that was not committed
// (58, or 57 when the outcome is unknown), with err saying why. Without
// one it is kept here; err is then a failure to write the file (the
// revocation holds in memory, code 0).
func (r *Revocations) RevokeToken(user auth.UserID, jti string, exp int64) (code uint32, err error) {
	if r.log != nil {
		return r.log.RevokeToken(user, jti, exp+int64((r.skew+time.Second-1)/time.Second))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	if len(r.jtis) >= r.max {
		var victim string
		var soonest int64
		for k, v := range r.jtis {
			if victim == "" || v < soonest {
				victim, soonest = k, v
			}
		}
		delete(r.jtis, victim)
	}
	r.jtis[jti] = exp
	return 0, r.saveLocked()
}

// RevokeUser revokes every token of user issued up to now.
func (r *Revocations) RevokeUser(user auth.UserID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	r.users[user] = r.now().UnixMilli()
	return r.saveLocked()
}

// Len is the number of revoked jtis and user cut-offs kept here (not
// those of the TokenLog).
func (r *Revocations) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.jtis) + len(r.users)
}

// sweepLocked drops entries no token can still match. Caller holds r.mu.
func (r *Revocations) sweepLocked() {
	now := r.now()
	for k, exp := range r.jtis {
		if exp+int64(r.skew/time.Second) < now.Unix() {
			delete(r.jtis, k)
		}
	}
	for u, cut := range r.users {
		if cut+r.lifetime.Milliseconds() < now.UnixMilli() {
			delete(r.users, u)
		}
	}
}

// saveLocked writes the list. Caller holds r.mu.
func (r *Revocations) saveLocked() error {
	if r.path == "" {
		return nil
	}
	f := revocationFile{JTIs: r.jtis, Users: map[string]int64{}}
	for u, v := range r.users {
		f.Users[fmt.Sprint(uint32(u))] = v
	}
	body, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode revocations: %w", err)
	}
	data := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(body)), xxh3.Hash(body))
	data = append(data, body...)
	if err := os.MkdirAll(filepath.Dir(r.path), 0o750); err != nil {
		return fmt.Errorf("save revocations: %w", err)
	}
	tmp := r.path + ".tmp"
	fh, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return fmt.Errorf("save revocations: %w", err)
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return fmt.Errorf("save revocations: %w", err)
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return fmt.Errorf("save revocations: %w", err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("save revocations: %w", err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return fmt.Errorf("save revocations: %w", err)
	}
	return nil
}
