package config

import (
	"errors"
	"strings"

	"github.com/iggo-dev/iggo/internal/encryption"
)

// EncryptionConfig is [system.encryption] (ops.md §5): AES-256-GCM of
// every message's payload and user headers at rest, decrypted on poll.
type EncryptionConfig struct {
	// Enabled encrypts what is appended from now on (default false).
	Enabled bool `toml:"enabled"`
	// Key is the standard base64 of 32 bytes (IGGY_SYSTEM_ENCRYPTION_KEY).
	// It is a Secret: never written to the runtime copy of the
	// configuration. Data records only a fingerprint of it.
	Key Secret `toml:"key"`
}

// validateEncryption checks system.encryption. The key is only checked
// when encryption is enabled (a key left in a file with enabled = false
// is not used; this choice is Iggo's, the reference leaves it open);
// enabled with a missing, malformed or short key refuses boot with one
// line naming the key and how to make one.
func (c *Config) validateEncryption() []error {
	if _, err := c.System.Encryption.Cipher(); err != nil {
		return []error{err}
	}
	return nil
}

// Cipher returns the at-rest cipher, or nil when encryption is disabled.
// A missing, malformed or short key is an error naming
// system.encryption.key (the key itself is never repeated).
func (e EncryptionConfig) Cipher() (*encryption.Cipher, error) {
	if !e.Enabled {
		return nil, nil
	}
	c, err := encryption.NewFromBase64(string(e.Key))
	if err != nil {
		// ParseKey's message starts with "encryption: bad key: ".
		msg := strings.TrimPrefix(err.Error(), encryption.ErrKey.Error()+": ")
		return nil, errors.New("system.encryption.key: " + msg)
	}
	return c, nil
}
