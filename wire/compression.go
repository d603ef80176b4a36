package wire

// CompressionAlgorithm is the topic compression code (encodings.md,
// "Compression codes"). The setting is stored and reported only; the server
// compresses nothing.
type CompressionAlgorithm uint8

// Compression codes.
const (
	// CompressionNone is code 1, the default.
	CompressionNone CompressionAlgorithm = 1
	// CompressionGzip is code 2.
	CompressionGzip CompressionAlgorithm = 2
)

// Valid reports whether c is a defined code (1 or 2); any other code is
// rejected where a client supplies it.
func (c CompressionAlgorithm) Valid() bool { return c == CompressionNone || c == CompressionGzip }

// String returns the canonical lowercase name ("none", "gzip"), the form
// the compression_algorithm option stores, or "unknown(N)" for another code.
func (c CompressionAlgorithm) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	}
	return "unknown(" + itoa(uint64(c)) + ")"
}

// ParseCompressionAlgorithm parses "none" or "gzip". The docs leave the
// handling of other spellings UNKNOWN; this accepts them in any ASCII case
// (the reference parser lowercases its input) and refuses anything else
// with ErrInvalidOptionValue.
func ParseCompressionAlgorithm(s string) (CompressionAlgorithm, error) {
	switch {
	case equalFoldASCII(s, "none"):
		return CompressionNone, nil
	case equalFoldASCII(s, "gzip"):
		return CompressionGzip, nil
	}
	return 0, ErrInvalidOptionValue
}

// equalFoldASCII reports whether s equals lower (an ASCII lowercase
// literal) ignoring ASCII case.
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
