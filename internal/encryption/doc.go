// Package encryption is encryption at rest of message data
// (system.encryption, ../shared/design/ops.md §5): AES-256-GCM with a
// 32-byte key, a random 12-byte nonce per sealed section, and the stored
// form nonce ‖ ciphertext ‖ 16-byte tag (+28 bytes per section).
//
// The batch transforms work on the wire batch layout (messages.md). Per
// message the payload and, when non-empty, the user-headers block are
// sealed separately; the 48-byte message header stays clear except its two
// lengths (ciphertext lengths) and its checksum, which, like the batch
// length and checksum, is recomputed over the stored bytes. Decryption
// restores the plaintext lengths and recomputes the message checksums
// (over the plaintext, as producers computed them) and the batch checksum,
// so a decrypted batch is byte for byte the batch that was encrypted.
//
// No associated data is bound to a section, as in the reference server;
// the checksums bind nothing either (anyone who can write the files can
// recompute them). What GCM guarantees is that a section decrypts only
// under the key that sealed it and only unmodified.
//
// A Cipher is safe for concurrent use. Nonces come from crypto/rand: one
// read per batch fills the nonces of all its sections, so no nonce is
// derived from another and none is ever reused by construction.
package encryption
