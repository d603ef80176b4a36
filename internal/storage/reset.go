package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
)

const (
	// resetMarkerName marks a ResetTo in progress; Open completes it.
	resetMarkerName = "reset.pending"
	// resetStateName keeps the offset and timestamp of the last completed
	// ResetTo, so that a partition reopened empty after it still reports
	// that last timestamp (Tail) and keeps stamps monotonic.
	resetStateName = "reset.state"
	// resetStateBytes is the marker/state encoding: next u64 | ts u64 |
	// CRC-32C of the 16 bytes before it, little-endian.
	resetStateBytes = 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeResetState(next, ts uint64) []byte {
	b := make([]byte, 0, resetStateBytes)
	b = binary.LittleEndian.AppendUint64(b, next)
	b = binary.LittleEndian.AppendUint64(b, ts)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeResetState(b []byte) (next, ts uint64, ok bool) {
	if len(b) != resetStateBytes || crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16]), true
}

// ResetTo deletes every segment (like Purge, but consumer offsets are KEPT)
// and restarts the partition empty at offset next with last timestamp ts:
// the next append gets offset next, Bounds() == (next, next), everything
// "revealed" up to next. A raft snapshot brings a replica to a position whose
// earlier data the leader no longer has. Crash-safe like Purge: a marker file
// holding next and ts makes an interrupted ResetTo complete at the next Open
// (the partition then opens empty at next).
//
// It works in both modes. The marker is renamed to reset.state once the
// reset is complete; Open takes the last timestamp from it when that is
// newer than the records' (an empty partition has no record to take it
// from). A marker whose content does not verify was torn before any file
// was removed: Open discards it and the reset did not happen. Readers
// holding extents of the old segments keep reading them until they release.
func (p *Partition) ResetTo(next, ts uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	marker := filepath.Join(p.dir, resetMarkerName)
	if err := writeFileSync(marker, encodeResetState(next, ts)); err != nil {
		return fmt.Errorf("reset to %d: %w", next, err)
	}
	if err := syncDir(p.dir); err != nil {
		return fmt.Errorf("reset to %d: %w", next, err)
	}
	p.qmu.Lock()
	defer p.qmu.Unlock()
	old := p.segs.Load().segs
	var err error
	for _, s := range old {
		err = errors.Join(err, s.unlink())
	}
	if err != nil {
		// The marker is durable and some files may be gone: the log
		// state is unknown until the next Open completes the reset.
		p.failed = fmt.Errorf("reset to %d: %w", next, err)
		return p.failed
	}
	seg, err := p.newSegmentLocked(next, 0)
	if err != nil {
		p.failed = fmt.Errorf("reset to %d: %w", next, err)
		return p.failed
	}
	p.gen++
	p.active = seg
	p.next = next
	p.lastTs = ts
	p.pendMsgs, p.pendBytes = 0, 0
	storeMax(&p.durable, p.appended)
	p.sealedBytes.Store(0)
	p.visNext.Store(next)
	p.segs.Store(&segList{segs: []*segment{seg}})
	for _, s := range old {
		s.release()
	}
	if err := finishReset(p.dir); err != nil {
		return fmt.Errorf("reset to %d: %w", next, err)
	}
	return nil
}

// finishReset turns the marker of a reset whose files are in place into
// the reset state.
func finishReset(dir string) error {
	if err := os.Rename(filepath.Join(dir, resetMarkerName), filepath.Join(dir, resetStateName)); err != nil {
		return err
	}
	return syncDir(dir)
}

// completeReset finishes a ResetTo interrupted by a crash: it removes every
// segment file, creates the empty segment at the marker's offset and turns
// the marker into the reset state. A torn marker is removed.
func (p *Partition) completeReset() error {
	marker := filepath.Join(p.dir, resetMarkerName)
	b, err := os.ReadFile(marker)
	if err != nil {
		return fmt.Errorf("complete reset: %w", err)
	}
	next, _, ok := decodeResetState(b)
	if !ok {
		// Written but not synced when the process died: ResetTo removes
		// nothing before the marker is durable.
		if err := os.Remove(marker); err != nil {
			return fmt.Errorf("complete reset: %w", err)
		}
		return syncDir(p.dir)
	}
	if err := removeSegmentFiles(p.dir); err != nil {
		return fmt.Errorf("complete reset: %w", err)
	}
	seg, err := createSegment(p.dir, next, 0, 0)
	if err != nil {
		return fmt.Errorf("complete reset: %w", err)
	}
	seg.release()
	if err := syncDir(p.dir); err != nil {
		return fmt.Errorf("complete reset: %w", err)
	}
	if err := finishReset(p.dir); err != nil {
		return fmt.Errorf("complete reset: %w", err)
	}
	return nil
}

// resetTimestamp returns the timestamp of the last completed ResetTo, 0
// when there is none or its state file does not verify.
func (p *Partition) resetTimestamp() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, resetStateName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read reset state: %w", err)
	}
	_, ts, ok := decodeResetState(b)
	if !ok {
		return 0, nil
	}
	return ts, nil
}
