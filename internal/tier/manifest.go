package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// manifestName is the file in a partition directory that lists the
// partition's segments in the remote tier.
const manifestName = "tier.manifest"

// manifestMagic starts a manifest file; manifestVersion is its layout.
const (
	manifestMagic   = "IGGOTIER"
	manifestVersion = 1
	// maxKeyLen bounds an object key (S3 allows 1024 bytes).
	maxKeyLen = 1024
	// maxManifestEntries bounds what a manifest may list, so a damaged
	// count cannot make the decoder allocate without bound.
	maxManifestEntries = 1 << 24
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Remote is one segment in the remote tier: an object holding the bytes
// of a sealed segment log as they were on local disk, and one holding its
// index.
type Remote struct {
	// Start and End are the offsets the segment holds: Start .. End-1.
	Start, End uint64
	// Bytes is the size of the log object; Records the number of index
	// entries (stored records).
	Bytes   int64
	Records uint32
	// FirstTimestamp and LastTimestamp are the server timestamps of the
	// first and last record (µs).
	FirstTimestamp, LastTimestamp uint64
	// Key is the log object's key; the index object's is IndexKey(Key).
	Key string
	// ETag is the log object's entity tag as verified after the upload.
	ETag string
}

// Manifest is what a partition has in the remote tier. It is saved in the
// partition directory, replaced atomically, before anything depends on it:
// a segment's local copy is dropped only after the manifest listing it is
// durable, and objects are deleted only after the manifest stopped
// listing them (their keys wait in Deletes until the bucket confirms).
type Manifest struct {
	// Epoch counts purges of the partition: offsets restart at 0 after a
	// purge, so object keys carry the epoch and never name old data.
	Epoch uint64
	// Segments are the uploaded segments, oldest first: both their
	// starts and their ends increase. They are contiguous, or have gaps
	// where retention removed local data before its upload; in a cluster
	// two may overlap (a replica restarted from a snapshot cuts its
	// segments elsewhere than the leader that uploaded the older ones).
	Segments []Remote
	// Deletes are keys of objects no longer listed whose deletion the
	// bucket has not confirmed yet.
	Deletes []string
}

// encode returns the manifest's file image:
//
//	magic [8] | version u32 | epoch u64 | segments u32 | segment...
//	| deletes u32 | (len u16 | key)... | crc32c u32 of everything before
//
// A segment is start u64 | end u64 | bytes u64 | records u32 |
// first_ts u64 | last_ts u64 | key (len u16 | bytes) | etag (len u16 |
// bytes). Little-endian.
func (m *Manifest) encode() []byte {
	b := make([]byte, 0, 32+len(m.Segments)*96+len(m.Deletes)*96)
	b = append(b, manifestMagic...)
	b = binary.LittleEndian.AppendUint32(b, manifestVersion)
	b = binary.LittleEndian.AppendUint64(b, m.Epoch)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Segments)))
	for i := range m.Segments {
		b = appendRemote(b, &m.Segments[i])
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Deletes)))
	for _, k := range m.Deletes {
		b = appendString(b, k)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// appendRemote appends a segment's encoding.
func appendRemote(b []byte, s *Remote) []byte {
	b = binary.LittleEndian.AppendUint64(b, s.Start)
	b = binary.LittleEndian.AppendUint64(b, s.End)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Bytes))
	b = binary.LittleEndian.AppendUint32(b, s.Records)
	b = binary.LittleEndian.AppendUint64(b, s.FirstTimestamp)
	b = binary.LittleEndian.AppendUint64(b, s.LastTimestamp)
	b = appendString(b, s.Key)
	return appendString(b, s.ETag)
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// decodeManifest parses a manifest file image, checking its checksum and
// that its segments are ordered and well formed.
func decodeManifest(b []byte) (Manifest, error) {
	var m Manifest
	if len(b) < len(manifestMagic)+4+8+4+4+4 || string(b[:len(manifestMagic)]) != manifestMagic {
		return m, fmt.Errorf("%w: not a manifest", errManifest)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return m, fmt.Errorf("%w: checksum mismatch", errManifest)
	}
	d := decoder{b: body[len(manifestMagic):]}
	if v := d.u32(); v != manifestVersion {
		return m, fmt.Errorf("%w: version %d", errManifest, v)
	}
	m.Epoch = d.u64()
	n := d.u32()
	if n > maxManifestEntries || int(n) > len(d.b)/46 {
		return m, fmt.Errorf("%w: %d segments", errManifest, n)
	}
	m.Segments = make([]Remote, 0, n)
	for range n {
		s := d.remote()
		if d.err != nil {
			break
		}
		if s.End <= s.Start || s.Bytes <= 0 || s.Records == 0 || s.Key == "" {
			return m, fmt.Errorf("%w: segment %d..%d malformed", errManifest, s.Start, s.End)
		}
		if k := len(m.Segments); k > 0 && (s.Start <= m.Segments[k-1].Start || s.End <= m.Segments[k-1].End) {
			return m, fmt.Errorf("%w: segment at %d out of order", errManifest, s.Start)
		}
		m.Segments = append(m.Segments, s)
	}
	nd := d.u32()
	if nd > maxManifestEntries || int(nd) > len(d.b)/2 {
		return m, fmt.Errorf("%w: %d deletes", errManifest, nd)
	}
	for range nd {
		k := d.str()
		if d.err != nil {
			break
		}
		m.Deletes = append(m.Deletes, k)
	}
	if d.err != nil {
		return m, d.err
	}
	if len(d.b) != 0 {
		return m, fmt.Errorf("%w: %d trailing bytes", errManifest, len(d.b))
	}
	return m, nil
}

// decoder reads little-endian fields, remembering the first overrun.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.err = fmt.Errorf("%w: truncated", errManifest)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u16() uint16 {
	if v := d.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// remote reads a segment as appendRemote wrote it.
func (d *decoder) remote() Remote {
	return Remote{Start: d.u64(), End: d.u64(), Bytes: int64(d.u64()), Records: d.u32(),
		FirstTimestamp: d.u64(), LastTimestamp: d.u64(), Key: d.str(), ETag: d.str()}
}

func (d *decoder) str() string {
	n := int(d.u16())
	if n > maxKeyLen {
		d.err = fmt.Errorf("%w: key of %d bytes", errManifest, n)
		return ""
	}
	return string(d.take(n))
}

// loadManifest reads the manifest at path; a missing file is an empty
// manifest.
func loadManifest(path string) (Manifest, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Manifest{}, nil
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("read %s: %w", path, err)
	}
	m, err := decodeManifest(b)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// save writes the manifest to path durably and atomically.
func (m *Manifest) save(path string) error {
	return fileio.WriteFileAtomic(path, m.encode())
}

// clone returns a copy whose slices the caller may change.
func (m *Manifest) clone() Manifest {
	return Manifest{Epoch: m.Epoch, Segments: slices.Clone(m.Segments), Deletes: slices.Clone(m.Deletes)}
}

// find returns the index of the first segment holding offset off, or -1.
func (m *Manifest) find(off uint64) int {
	i := sort.Search(len(m.Segments), func(i int) bool { return m.Segments[i].End > off })
	if i < len(m.Segments) && m.Segments[i].Start <= off {
		return i
	}
	return -1
}

// covers reports whether the segments listed hold every offset of
// start .. end-1.
func (m *Manifest) covers(start, end uint64) bool {
	for start < end {
		i := m.find(start)
		if i < 0 {
			return false
		}
		start = m.Segments[i].End
	}
	return true
}

// insert adds r in order; false when the segments listed already hold
// its offsets or r does not fit the order (a segment starting at or
// before another but ending at or before it).
func (m *Manifest) insert(r Remote) bool {
	if m.covers(r.Start, r.End) {
		return false
	}
	i := sort.Search(len(m.Segments), func(i int) bool { return m.Segments[i].Start >= r.Start })
	if (i > 0 && m.Segments[i-1].End >= r.End) || (i < len(m.Segments) && m.Segments[i].End <= r.End) {
		return false
	}
	m.Segments = slices.Insert(m.Segments, i, r)
	return true
}

// bytes is the size of the segments listed.
func (m *Manifest) bytes() int64 {
	var n int64
	for i := range m.Segments {
		n += m.Segments[i].Bytes
	}
	return n
}

// ReadManifest returns the manifest of the partition whose directory is
// dir (an empty one when it has none), for tools and tests that look at
// a partition from outside the server.
func ReadManifest(dir string) (Manifest, error) {
	return loadManifest(filepath.Join(dir, manifestName))
}
