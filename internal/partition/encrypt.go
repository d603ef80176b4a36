package partition

import (
	"errors"
	"fmt"

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
	first, _ := log.Bounds()
	if part.tier != nil {
		first, _ = part.tier.Bounds()
	}
	c, err := openCrypt(part.dir, p.opts.Cipher, log, first, p.log)
	if err == nil {
		part.crypt = c
		return true
	}
	p.closeTier(part, false)
	part.tier = nil
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
