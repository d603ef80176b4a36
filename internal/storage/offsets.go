package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/zeebo/xxh3"
)

// ConsumerKind tells plain consumers from consumer groups; the values are
// the wire consumer kinds (1 consumer, 2 group).
type ConsumerKind uint8

// Consumer kinds.
const (
	KindConsumer ConsumerKind = 1
	KindGroup    ConsumerKind = 2
)

const (
	consumersDirName = "consumers"
	groupsDirName    = "groups"
	tempSuffix       = ".tmp"
	// offsetFileBytes is the file layout of ../shared/design/storage.md §4:
	// offset u64 LE + XXH3-64 of those 8 bytes, u64 LE.
	offsetFileBytes = 16
	// legacyOffsetFileBytes is the older format without checksum, accepted
	// on load.
	legacyOffsetFileBytes = 8
)

type offsetKey struct {
	kind ConsumerKind
	id   uint32
}

// Offsets stores the consumer and consumer-group offsets of one partition,
// one small checksummed file each (offsets/consumers/{id},
// offsets/groups/{id}). Files are replaced atomically (temp file, rename);
// with sync (enforce_fsync) the temp file and the directory are fsynced too.
// A torn or corrupt file is ignored on load (the offset reads as absent) and
// overwritten by the next store. Safe for concurrent use.
type Offsets struct {
	dir  string
	sync bool

	mu     sync.Mutex
	m      map[offsetKey]uint64
	closed bool
}

// OpenOffsets loads the offsets under dir, creating the directories.
func OpenOffsets(dir string, sync bool) (*Offsets, error) {
	o := &Offsets{dir: dir, sync: sync, m: map[offsetKey]uint64{}}
	for _, kind := range []ConsumerKind{KindConsumer, KindGroup} {
		if err := o.load(kind); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o *Offsets) kindDir(kind ConsumerKind) string {
	if kind == KindGroup {
		return filepath.Join(o.dir, groupsDirName)
	}
	return filepath.Join(o.dir, consumersDirName)
}

func (o *Offsets) load(kind ConsumerKind) error {
	dir := o.kindDir(kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create offsets dir: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read offsets dir: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, tempSuffix) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("remove leftover offset file: %w", err)
			}
			continue
		}
		id, err := strconv.ParseUint(name, 10, 32)
		if err != nil || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("read offset file: %w", err)
		}
		if off, ok := DecodeOffsetFile(b); ok {
			o.m[offsetKey{kind, uint32(id)}] = off
		}
	}
	return nil
}

// DecodeOffsetFile decodes a consumer-offset file: 16 bytes (offset and its
// XXH3-64 checksum) or the older 8-byte form. ok is false for anything else
// or a checksum mismatch.
func DecodeOffsetFile(b []byte) (offset uint64, ok bool) {
	switch len(b) {
	case legacyOffsetFileBytes:
		return binary.LittleEndian.Uint64(b), true
	case offsetFileBytes:
		if xxh3.Hash(b[:8]) != binary.LittleEndian.Uint64(b[8:]) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(b), true
	}
	return 0, false
}

// AppendOffsetFile appends the 16-byte file encoding of offset to dst.
func AppendOffsetFile(dst []byte, offset uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, offset)
	return binary.LittleEndian.AppendUint64(dst, xxh3.Hash(dst[len(dst)-8:]))
}

// Get returns the stored offset of a consumer or group.
func (o *Offsets) Get(kind ConsumerKind, id uint32) (uint64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	off, ok := o.m[offsetKey{kind, id}]
	return off, ok
}

// Store sets the offset (it may move backwards: explicit stores can,
// semantics.md §5).
func (o *Offsets) Store(kind ConsumerKind, id uint32, offset uint64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.storeLocked(kind, id, offset)
}

// Advance sets the offset only if it moves forward or none is stored
// (auto-commit never moves an offset backwards, semantics.md §4.2); it
// reports whether it stored.
func (o *Offsets) Advance(kind ConsumerKind, id uint32, offset uint64) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if cur, ok := o.m[offsetKey{kind, id}]; ok && cur >= offset {
		return false, nil
	}
	return true, o.storeLocked(kind, id, offset)
}

func (o *Offsets) storeLocked(kind ConsumerKind, id uint32, offset uint64) error {
	if o.closed {
		return ErrClosed
	}
	dir := o.kindDir(kind)
	name := strconv.FormatUint(uint64(id), 10)
	var buf [offsetFileBytes]byte
	if err := o.replace(dir, name, AppendOffsetFile(buf[:0], offset)); err != nil {
		return fmt.Errorf("store offset %d/%d: %w", kind, id, err)
	}
	o.m[offsetKey{kind, id}] = offset
	return nil
}

// replace atomically replaces dir/name with data.
func (o *Offsets) replace(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+tempSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && o.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if o.sync {
		return syncDir(dir)
	}
	return nil
}

// Delete removes an offset; false if none was stored.
func (o *Offsets) Delete(kind ConsumerKind, id uint32) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false, ErrClosed
	}
	k := offsetKey{kind, id}
	if _, ok := o.m[k]; !ok {
		return false, nil
	}
	dir := o.kindDir(kind)
	if err := os.Remove(filepath.Join(dir, strconv.FormatUint(uint64(id), 10))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("delete offset %d/%d: %w", kind, id, err)
	}
	delete(o.m, k)
	if o.sync {
		return true, syncDir(dir)
	}
	return true, nil
}

// Clear removes every offset (purge).
func (o *Offsets) Clear() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return ErrClosed
	}
	for _, kind := range []ConsumerKind{KindConsumer, KindGroup} {
		dir := o.kindDir(kind)
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("clear offsets: %w", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("clear offsets: %w", err)
		}
	}
	clear(o.m)
	if o.sync {
		return syncDir(o.dir)
	}
	return nil
}

// Close makes further changes fail with ErrClosed (Partition.Close calls
// it); Get keeps working from memory.
func (o *Offsets) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	return nil
}
