package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
)

// A segment with quarantined records keeps the list beside its log in
// {start_offset:020}.quarantine, so that recovery, which trusts a sealed
// index without reading every record, never serves them after a restart,
// and a range located once stays one even where the evidence that located
// it is gone (a torn tail cut after it):
//
//	magic "IGQ1" | count u32 | count × (pos u64 | len u64 | first u64 |
//	last u64 | reason_len u16 | reason) | CRC-32C of everything before, u32
//
// little-endian. The file is replaced atomically (temp file, rename,
// directory sync), removed with its segment, and removed when the last
// range is repaired. One that does not decode makes recovery walk and
// verify the whole segment instead (recover.go).
const (
	quarSuffix      = ".quarantine"
	quarMagic       = "IGQ1"
	quarEntryFixed  = 4*8 + 2
	maxReasonBytes  = 200
	quarHeaderBytes = 8
)

// errSidecar marks a quarantine file that does not decode.
var errSidecar = errors.New("quarantine file damaged")

// encodeSidecar returns the file content for q (Path is not stored).
func encodeSidecar(q []Damage) []byte {
	b := make([]byte, 0, quarHeaderBytes+len(q)*(quarEntryFixed+32)+4)
	b = append(b, quarMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(q)))
	for _, d := range q {
		r := d.Reason
		if len(r) > maxReasonBytes {
			r = r[:maxReasonBytes]
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(d.Pos))
		b = binary.LittleEndian.AppendUint64(b, uint64(d.Len))
		b = binary.LittleEndian.AppendUint64(b, d.First)
		b = binary.LittleEndian.AppendUint64(b, d.Last)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(r)))
		b = append(b, r...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodeSidecar decodes a quarantine file of the segment whose log is path
// and logSize bytes long. The ranges must be inside the log, non-empty,
// and ordered by offset and position without overlap. It never allocates
// more than len(b) implies.
func DecodeSidecar(b []byte, path string, logSize int64) ([]Damage, error) {
	if len(b) < quarHeaderBytes+4 || string(b[:4]) != quarMagic {
		return nil, fmt.Errorf("%w: bad header", errSidecar)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errSidecar)
	}
	n := binary.LittleEndian.Uint32(body[4:8])
	if uint64(n)*quarEntryFixed > uint64(len(body)-quarHeaderBytes) {
		return nil, fmt.Errorf("%w: %d entries do not fit", errSidecar, n)
	}
	out := make([]Damage, 0, n)
	r := body[quarHeaderBytes:]
	for range n {
		if len(r) < quarEntryFixed {
			return nil, fmt.Errorf("%w: short entry", errSidecar)
		}
		d := Damage{Path: path,
			Pos:   int64(binary.LittleEndian.Uint64(r[0:8])),
			Len:   int64(binary.LittleEndian.Uint64(r[8:16])),
			First: binary.LittleEndian.Uint64(r[16:24]),
			Last:  binary.LittleEndian.Uint64(r[24:32]),
		}
		rl := int(binary.LittleEndian.Uint16(r[32:34]))
		r = r[quarEntryFixed:]
		if rl > len(r) || rl > maxReasonBytes {
			return nil, fmt.Errorf("%w: bad reason length", errSidecar)
		}
		d.Reason, r = string(r[:rl]), r[rl:]
		if d.Pos < 0 || d.Len <= 0 || d.Len > logSize-d.Pos || d.Last < d.First {
			return nil, fmt.Errorf("%w: range outside the log", errSidecar)
		}
		if k := len(out); k > 0 && (d.First <= out[k-1].Last || d.Pos < out[k-1].Pos+out[k-1].Len) {
			return nil, fmt.Errorf("%w: ranges out of order", errSidecar)
		}
		out = append(out, d)
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errSidecar)
	}
	return out, nil
}

// quarPath is the segment's quarantine file.
func (s *segment) quarPath() string {
	return s.logPath[:len(s.logPath)-len(logSuffix)] + quarSuffix
}

// readSidecar reads and decodes the segment's quarantine file; (nil, nil)
// when there is none.
func (s *segment) readSidecar(logSize int64) ([]Damage, error) {
	b, err := os.ReadFile(s.quarPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.quarPath(), err)
	}
	return DecodeSidecar(b, s.logPath, logSize)
}

// writeSidecar makes the segment's quarantine file say q: replaced
// atomically, or removed when q is empty; durable on return. Caller must
// hold Partition.qmu or own the segment.
func (s *segment) writeSidecar(dir string, q []Damage) error {
	path := s.quarPath()
	if len(q) == 0 {
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return syncDir(dir)
	}
	tmp := path + tempSuffix
	if err := writeFileSync(tmp, encodeSidecar(q)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}
