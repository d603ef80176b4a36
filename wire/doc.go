// Package wire is the byte-exact codec of the Apache Iggy binary protocol 0.11.0.
//
// It holds the 256-byte frame headers (RequestHeader, ReplyHeader,
// EvictionHeader), the command registry, the result section, every request and
// reply body, the shared encodings (Name, Identifier, Consumer, options
// blocks, permissions, ...), message batches, and the IggyError code space.
//
// The package performs no I/O and depends only on the standard library and
// github.com/zeebo/xxh3. Encoders append to a caller-owned buffer
// (AppendTo(dst) []byte); decoders read from a byte slice (Decode(src) error),
// never panic and never allocate in proportion to an unchecked length. Reply
// decoders reject trailing bytes. Request body decoders read a prefix and
// ignore bytes after their last field, as the reference server does, except
// where the last field runs to the end of the body (options blocks) or the
// layout is length-checked (SEND_MESSAGES); see Body. Message batches are
// decoded as views over the caller's buffer so that the hot paths allocate
// nothing per message.
package wire
