package partition

import (
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/iggo-dev/iggo/internal/encryption"
)

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
	// keyErrs are the partitions stopped by a KeyError; guarded by the
	// plane's mutex.
	keyErrs []error
}

// keyTag is a one-byte tag of c's key fingerprint, never 0 (0 marks a
// plaintext batch in a partition log entry): a replica checks that the
// leader sealed a batch with the key it holds itself. A key on one side
// only, and most other keys, differ in the tag; a batch whose tag matches
// is opened once more (segLog.verify), which catches the rest.
func keyTag(c *encryption.Cipher) uint8 {
	return uint8(xxh3.HashString(c.Fingerprint())%255) + 1
}
