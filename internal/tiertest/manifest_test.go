//go:build !windows

package tiertest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// manifestName is the file listing a partition's segments in the bucket
// (internal/tier, manifest.go).
const manifestName = "tier.manifest"

// remoteSeg is one segment a manifest lists.
type remoteSeg struct {
	Start, End uint64
	Bytes      int64
	Records    uint32
	Key, ETag  string
}

// manifest is what a partition's tier.manifest says it has in the bucket.
type manifest struct {
	Epoch    uint64
	Segments []remoteSeg
	Deletes  []string
}

// remoteBytes is the size of the segments listed.
func (m *manifest) remoteBytes() int64 {
	var n int64
	for _, s := range m.Segments {
		n += s.Bytes
	}
	return n
}

// find returns the segment starting at start.
func (m *manifest) find(start uint64) (remoteSeg, bool) {
	for _, s := range m.Segments {
		if s.Start == start {
			return s, true
		}
	}
	return remoteSeg{}, false
}

// readManifest reads a partition directory's manifest; a missing file is
// an empty manifest. The layout is the documented one of
// internal/tier/manifest.go (Manifest.encode), version 1:
//
//	magic "IGGOTIER" | version u32 | epoch u64 | segments u32 | segment...
//	| deletes u32 | (len u16 | key)... | crc32c u32
//
// with a segment start u64 | end u64 | bytes u64 | records u32 |
// first_ts u64 | last_ts u64 | key | etag, little-endian.
func readManifest(partDir string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(partDir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if len(b) < 8+4+8+4+4+4 || string(b[:8]) != "IGGOTIER" {
		return m, errors.New("tier.manifest: bad magic")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return m, errors.New("tier.manifest: checksum mismatch")
	}
	r := &byteReader{b: body[8:]}
	if v := r.u32(); v != 1 {
		return m, fmt.Errorf("tier.manifest: version %d, this test reads version 1", v)
	}
	m.Epoch = r.u64()
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		s := remoteSeg{Start: r.u64(), End: r.u64(), Bytes: int64(r.u64()), Records: r.u32()}
		r.u64() // first timestamp
		r.u64() // last timestamp
		s.Key, s.ETag = r.str(), r.str()
		m.Segments = append(m.Segments, s)
	}
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		m.Deletes = append(m.Deletes, r.str())
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("tier.manifest: %d trailing bytes", len(r.b))
	}
	return m, r.err
}

// byteReader reads little-endian fields, remembering an overrun.
type byteReader struct {
	b   []byte
	err error
}

func (r *byteReader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errors.New("tier.manifest: truncated")
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *byteReader) u16() uint16 { return binary.LittleEndian.Uint16(r.take(2)) }
func (r *byteReader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *byteReader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *byteReader) str() string { return string(r.take(int(r.u16()))) }
