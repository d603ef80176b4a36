package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/internal/storage"
)

// markerFileName is the encryption marker in a partition directory.
const markerFileName = "encryption.json"

// markerFormat is the marker's format version.
const markerFormat = 1

// maxMarkerBytes bounds the marker read.
const maxMarkerBytes = 4 << 10

// keyMarker is the marker file: which key the partition's encrypted
// records were written with (its fingerprint, never the key) and from
// which offset on they are encrypted.
type keyMarker struct {
	Format    int    `json:"format"`
	Algorithm string `json:"algorithm"`
	// KeyFingerprint is encryption.Cipher.Fingerprint of the key.
	KeyFingerprint string `json:"key_fingerprint"`
	// PlaintextBefore: records with a base offset below it were stored
	// before encryption was enabled and are plaintext.
	PlaintextBefore uint64 `json:"plaintext_before"`
}

// readMarker reads the marker at path; found is false when there is none.
func readMarker(path string) (m keyMarker, found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return keyMarker{}, false, nil
	}
	if err != nil {
		return keyMarker{}, false, fmt.Errorf("read encryption marker: %w", err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxMarkerBytes+1))
	if err != nil {
		return keyMarker{}, false, fmt.Errorf("read encryption marker %s: %w", path, err)
	}
	if len(buf) > maxMarkerBytes {
		return keyMarker{}, false, fmt.Errorf("encryption marker %s is larger than %d bytes", path, maxMarkerBytes)
	}
	if err := json.Unmarshal(buf, &m); err != nil || m.Format != markerFormat || m.KeyFingerprint == "" {
		return keyMarker{}, false, fmt.Errorf("encryption marker %s is unreadable (format %d): %v", path, m.Format, err)
	}
	return m, true, nil
}

// writeMarker replaces the marker at path durably (fileio.WriteFileAtomic).
func writeMarker(path, fingerprint string, plaintextBefore uint64) error {
	data, err := json.Marshal(keyMarker{Format: markerFormat, Algorithm: "AES-256-GCM", KeyFingerprint: fingerprint, PlaintextBefore: plaintextBefore})
	if err != nil {
		return fmt.Errorf("encode encryption marker: %w", err)
	}
	if err := fileio.WriteFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write encryption marker: %w", err)
	}
	return nil
}

// removeMarker deletes the marker durably.
func removeMarker(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove encryption marker: %w", err)
	}
	return fileio.SyncDir(filepath.Dir(path))
}

// openCrypt decides the encryption state of a partition whose log has just
// been opened, from its marker and the configured cipher (nil: disabled):
//
//   - disabled, no marker: plaintext partition (nil state).
//   - disabled, a marker and encrypted records still retained: KeyError.
//   - disabled, a marker but no encrypted record left (retention removed
//     them, or none was written): the marker is removed, plaintext.
//   - enabled, the marker's fingerprint is the key's: encrypted from the
//     marker's offset on.
//   - enabled, another key's marker and encrypted records retained:
//     KeyError.
//   - enabled, no marker (or another key's with nothing it encrypted
//     left): a marker for this key is written; records already stored are
//     plaintext and stay readable as stored.
//
// first is the oldest offset the partition holds in any tier (the remote
// tier's oldest segment when there is one).
func openCrypt(dir string, c *encryption.Cipher, log *storage.Partition, first uint64, lg *slog.Logger) (*partCrypt, error) {
	path := filepath.Join(dir, markerFileName)
	m, found, err := readMarker(path)
	if err != nil {
		return nil, err
	}
	// Tail, not Bounds: a Held (cluster) partition reveals nothing
	// before its raft group starts.
	next, _ := log.Tail()
	encrypted := found && next > max(first, m.PlaintextBefore)
	switch {
	case c == nil && !found:
		return nil, nil
	case c == nil && encrypted:
		return nil, &KeyError{Dir: dir, Stored: m.KeyFingerprint}
	case c == nil:
		if err := removeMarker(path); err != nil {
			return nil, err
		}
		lg.Info("encryption disabled: the partition holds no encrypted message, its encryption marker was removed", "dir", dir)
		return nil, nil
	case found && m.KeyFingerprint == c.Fingerprint():
		pc := &partCrypt{cipher: c, tag: keyTag(c), marker: path}
		pc.plainBefore.Store(m.PlaintextBefore)
		return pc, nil
	case encrypted:
		return nil, &KeyError{Dir: dir, Stored: m.KeyFingerprint, Configured: c.Fingerprint()}
	}
	if err := writeMarker(path, c.Fingerprint(), next); err != nil {
		return nil, err
	}
	if next > first {
		lg.Info("encryption enabled over existing plaintext messages: they are served as stored, new ones are encrypted",
			"dir", dir, "encrypted_from_offset", next)
	}
	pc := &partCrypt{cipher: c, tag: keyTag(c), marker: path}
	pc.plainBefore.Store(next)
	return pc, nil
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
