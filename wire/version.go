package wire

// Protocol version of this package: 0.11.0 packed as
// major<<20 | minor<<10 | patch (10 bits each) = 11264 (README.md, "Protocol version").
const (
	ProtocolMajor = 0
	ProtocolMinor = 11
	ProtocolPatch = 0
	// ProtocolVersion is the packed 0.11.0.
	ProtocolVersion uint32 = ProtocolMajor<<20 | ProtocolMinor<<10 | ProtocolPatch
	// ProtocolVersionMin is the lowest version a 0.11 server accepts: its own
	// version with the patch bits cleared.
	ProtocolVersionMin uint32 = ProtocolVersion &^ 0x3ff
	// ProtocolVersionString is the semver string servers and SDKs report.
	ProtocolVersionString = "0.11.0"
)

// PackVersion packs a semantic version; each part must fit in 10 bits, so
// larger values are masked.
func PackVersion(major, minor, patch uint32) uint32 {
	return (major&0x3ff)<<20 | (minor&0x3ff)<<10 | patch&0x3ff
}

// UnpackVersion splits a packed version into its parts.
func UnpackVersion(v uint32) (major, minor, patch uint32) {
	return v >> 20 & 0x3ff, v >> 10 & 0x3ff, v & 0x3ff
}

// FormatVersion renders a packed version as "major.minor.patch".
func FormatVersion(v uint32) string {
	a, b, c := UnpackVersion(v)
	return itoa(uint64(a)) + "." + itoa(uint64(b)) + "." + itoa(uint64(c))
}

// VersionAccepted reports whether a client's packed version c falls in the
// window [min, max] where the patch is ignored on the upper bound:
// c >= min && c>>10 <= max>>10. Bits 31..30 must be zero.
func VersionAccepted(c, min, max uint32) bool {
	return c>>30 == 0 && c >= min && c>>10 <= max>>10
}
