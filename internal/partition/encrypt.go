package partition

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Encryption at rest (system.encryption, docs/ENCRYPTION.md).
//
// With Options.Cipher set, send seals every admitted batch once, after
// validation and the duplicate-window check and before the storage append
// stamps it (appendRecord), so the stored message and batch checksums
// cover the ciphertext and recovery verifies stored bytes as ever. Poll
// is the single decrypt point (fillDecrypted): it reads the stored
// records, opens them into the reply buffer and rebuilds the plaintext
// lengths and checksums, so every transport and the HTTP API (all of them
// go through the dispatcher to this plane) serve plaintext. The file
// extent (sendfile) path is not used while a partition is encrypted.
//
// Each partition directory written with a key holds a marker file
// (markerFileName) with the key's fingerprint and the offset below which
// the partition's records are plaintext (written before encryption was
// enabled; those are served as stored). When a partition opens, the marker
// decides (openCrypt): encrypted records with encryption disabled, or
// under another key's fingerprint, stop the partition with a KeyError,
// and the broker refuses to start (Plane.KeyError).

// partCrypt is the encryption state of one open partition; a partition
// without one has no encrypted records.
type partCrypt struct {
	cipher *encryption.Cipher
	// tag is keyTag(cipher) (cluster mode: replicated batches carry it).
	tag uint8
	// marker is the path of the partition's marker file.
	marker string
	// plainBefore: records whose base offset is below it are stored
	// plaintext.
	plainBefore atomic.Uint64
}

// planeCrypt is the plane's encryption state.
type planeCrypt struct {
	// keyErrs are the partitions stopped by a KeyError; guarded by
	// Plane.mu.
	keyErrs []error
}

// KeyError is a partition whose stored records cannot be read with the
// configured system.encryption settings. The partition is stopped, never
// served as ciphertext.
type KeyError struct {
	// Dir is the partition directory.
	Dir string
	// Stored is the fingerprint of the key its records were written with.
	Stored string
	// Configured is the configured key's fingerprint, empty when
	// encryption is disabled.
	Configured string
}

// Error is one line naming the key, the path and what to do.
func (e *KeyError) Error() string {
	if e.Configured == "" {
		return fmt.Sprintf("system.encryption.key: partition data at %s is encrypted (key fingerprint %s) but system.encryption.enabled is false; start with encryption enabled and the key it was written with", e.Dir, e.Stored)
	}
	return fmt.Sprintf("system.encryption.key: partition data at %s was encrypted with another key (fingerprint %s, the configured key's is %s); start with the key it was written with", e.Dir, e.Stored, e.Configured)
}

// KeyError reports the partitions that were stopped because their data
// does not match the encryption settings (one line: the first, and how
// many more). The broker refuses to start when it is non-nil; it is nil
// when every partition opened so far is readable.
func (p *Plane) KeyError() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch n := len(p.enc.keyErrs); n {
	case 0:
		return nil
	case 1:
		return p.enc.keyErrs[0]
	default:
		return fmt.Errorf("%w (and %d more partitions)", p.enc.keyErrs[0], n-1)
	}
}

// attachCrypt settles the encryption state of a partition CreatePartitions
// has just opened (p.mu held). It returns true when the partition can be
// served (part.crypt set, or nil for plaintext); otherwise the log is
// closed and the partition is recorded as stopped (a KeyError) or as not
// opened (any other error, appended to errs).
func (p *Plane) attachCrypt(tp *topic, part *partition, log *storage.Partition, errs *[]error) bool {
	c, err := openCrypt(part.dir, p.opts.Cipher, log, p.log)
	if err == nil {
		part.crypt = c
		return true
	}
	if cerr := log.Close(); cerr != nil {
		p.log.Warn("close partition", "dir", part.dir, "err", cerr)
	}
	var ke *KeyError
	if errors.As(err, &ke) {
		p.log.Error("partition stopped: its data does not match system.encryption and will not be served", "dir", part.dir, "err", err)
		part.broken = err
		tp.parts[part.id] = part
		p.enc.keyErrs = append(p.enc.keyErrs, err)
		return false
	}
	*errs = append(*errs, fmt.Errorf("open partition %s: %w", part.dir, err))
	tp.unopened[part.id] = struct{}{}
	return false
}

// resetCrypt prepares an encrypted partition for a purge: everything
// appended after it is encrypted from offset 0, so the marker is rewritten
// first. Until the purge has run, polls of the old plaintext records fail
// (status 4011) rather than serving anything wrong.
func (p *Plane) resetCrypt(part *partition) error {
	c := part.crypt
	if c == nil {
		return nil
	}
	if err := writeMarker(c.marker, c.cipher.Fingerprint(), 0); err != nil {
		return fmt.Errorf("purge partition %d: %w", part.id, err)
	}
	c.plainBefore.Store(0)
	return nil
}

// keyTag is a one-byte tag of c's key fingerprint, never 0 (0 marks a
// plaintext batch in a partition log entry): a replica checks that the
// leader sealed a batch with the key it holds itself. A key on one side
// only, and most other keys, differ in the tag; a batch whose tag matches
// is opened once more (segLog.verify), which catches the rest.
func keyTag(c *encryption.Cipher) uint8 {
	return uint8(xxh3.HashString(c.Fingerprint())%255) + 1
}
