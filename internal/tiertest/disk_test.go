//go:build !windows

package tiertest

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// localSeg is one segment log file in a partition directory.
type localSeg struct {
	Start uint64
	Bytes int64
}

// localUse is what a partition directory holds on disk.
type localUse struct {
	// Segments are the segment logs ({start:020}.log), oldest first; the
	// last one is the active segment.
	Segments []localSeg
	// LogBytes is the size of the segment logs together.
	LogBytes int64
	// DirBytes is the size of every file under the directory (logs,
	// indexes, the manifest, the local copies of remote indexes).
	DirBytes int64
}

// measureLocal reads a partition directory. Files removed while it looks
// are skipped.
func measureLocal(dir string) (localUse, error) {
	var u localUse
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		u.DirBytes += info.Size()
		name := d.Name()
		if filepath.Dir(path) != dir || !strings.HasSuffix(name, ".log") || len(name) != 24 {
			return nil
		}
		start, err := strconv.ParseUint(strings.TrimSuffix(name, ".log"), 10, 64)
		if err != nil {
			return nil
		}
		u.Segments = append(u.Segments, localSeg{Start: start, Bytes: info.Size()})
		u.LogBytes += info.Size()
		return nil
	})
	slices.SortFunc(u.Segments, func(a, b localSeg) int { return cmpU64(a.Start, b.Start) })
	return u, err
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// tierState is a partition's two tiers as seen from its directory.
type tierState struct {
	Local    localUse
	Manifest manifest
}

// readState reads the manifest and the segment files of a partition.
func readState(partDir string) (tierState, error) {
	m, err := readManifest(partDir)
	if err != nil {
		return tierState{}, err
	}
	u, err := measureLocal(partDir)
	return tierState{Local: u, Manifest: m}, err
}

// sealed returns the local sealed segments (every one but the active,
// newest segment).
func (s *tierState) sealed() []localSeg {
	if len(s.Local.Segments) == 0 {
		return nil
	}
	return s.Local.Segments[:len(s.Local.Segments)-1]
}

// activeStart is the first offset of the active segment.
func (s *tierState) activeStart() uint64 {
	if len(s.Local.Segments) == 0 {
		return 0
	}
	return s.Local.Segments[len(s.Local.Segments)-1].Start
}

// pending returns the bytes and count of the local sealed segments the
// manifest does not list (not uploaded yet).
func (s *tierState) pending() (bytes int64, n int) {
	for _, seg := range s.sealed() {
		if _, ok := s.Manifest.find(seg.Start); !ok {
			bytes += seg.Bytes
			n++
		}
	}
	return bytes, n
}

// uploadedLocal is the size of the local sealed segments the manifest
// lists (uploaded, kept by the local retention).
func (s *tierState) uploadedLocal() int64 {
	var n int64
	for _, seg := range s.sealed() {
		if _, ok := s.Manifest.find(seg.Start); ok {
			n += seg.Bytes
		}
	}
	return n
}

// caughtUp says why the partition is not caught up yet ("" when it is):
// every sealed segment is in the manifest, the manifest's segments are
// contiguous up to the active segment from first, no deletion is queued,
// and the local sealed segments fit in keep bytes.
func (s *tierState) caughtUp(first uint64, keep int64) string {
	if bytes, n := s.pending(); n > 0 {
		return fmt.Sprintf("%d sealed segments (%d bytes) not uploaded", n, bytes)
	}
	if len(s.Manifest.Deletes) > 0 {
		return fmt.Sprintf("%d deletions queued", len(s.Manifest.Deletes))
	}
	if err := s.contiguous(first); err != "" {
		return err
	}
	var sealed int64
	for _, seg := range s.sealed() {
		sealed += seg.Bytes
	}
	if sealed > keep {
		return fmt.Sprintf("%d bytes of sealed segments local, local retention %d", sealed, keep)
	}
	return ""
}

// contiguous checks that the manifest's segments run from first to the
// active segment without gaps ("" when they do).
func (s *tierState) contiguous(first uint64) string {
	next := first
	for _, seg := range s.Manifest.Segments {
		if seg.Start != next || seg.End <= seg.Start {
			return fmt.Sprintf("manifest segment %d..%d, expected one starting at %d", seg.Start, seg.End, next)
		}
		next = seg.End
	}
	if len(s.Local.Segments) > 0 && next != s.activeStart() {
		return fmt.Sprintf("the manifest ends at %d, the active segment starts at %d", next, s.activeStart())
	}
	return ""
}

// String summarises the state for a failure message.
func (s tierState) String() string {
	pb, pn := s.pending()
	return fmt.Sprintf("local: %d segment files, %d log bytes, %d bytes in the directory, active segment at %d; "+
		"manifest: epoch %d, %d segments (%d bytes), %d deletions queued; pending uploads: %d (%d bytes)",
		len(s.Local.Segments), s.Local.LogBytes, s.Local.DirBytes, s.activeStart(),
		s.Manifest.Epoch, len(s.Manifest.Segments), s.Manifest.remoteBytes(), len(s.Manifest.Deletes), pn, pb)
}

// waitCaughtUp waits until the partition is caught up (tierState.caughtUp)
// and returns its state and how long that took; it fails the test after
// timeout.
func waitCaughtUp(t testing.TB, partDir string, first uint64, keep int64, timeout time.Duration) (tierState, time.Duration) {
	t.Helper()
	start := time.Now()
	if st, ok := tryCaughtUp(partDir, first, keep, timeout); ok {
		return st, time.Since(start)
	}
	st, err := readState(partDir)
	t.Fatalf("uploads not caught up after %s: %s (%v)\n%s", timeout, st.caughtUp(first, keep), err, st)
	return st, 0
}

// tryCaughtUp is waitCaughtUp reporting a timeout with ok false.
func tryCaughtUp(partDir string, first uint64, keep int64, timeout time.Duration) (st tierState, ok bool) {
	deadline := time.Now().Add(timeout)
	for {
		st, err := readState(partDir)
		if err == nil && st.caughtUp(first, keep) == "" {
			return st, true
		}
		if time.Now().After(deadline) {
			return st, false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// diskMeter samples a partition directory in the background and keeps the
// largest figures seen.
type diskMeter struct {
	stop chan struct{}
	done chan struct{}
	// Filled when done is closed.
	samples                        int
	maxLog, maxDir, maxUploadLocal int64
	maxPending                     int64
}

// meterDisk samples dir every interval until Stop.
func meterDisk(dir string, interval time.Duration) *diskMeter {
	m := &diskMeter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			// A sample that cannot be read (files removed while
			// looked at) is skipped.
			if st, err := readState(dir); err == nil {
				m.samples++
				m.maxLog = max(m.maxLog, st.Local.LogBytes)
				m.maxDir = max(m.maxDir, st.Local.DirBytes)
				m.maxUploadLocal = max(m.maxUploadLocal, st.uploadedLocal())
				pb, _ := st.pending()
				m.maxPending = max(m.maxPending, pb)
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// Stop ends the sampling and waits for the sampler.
func (m *diskMeter) Stop() {
	close(m.stop)
	<-m.done
}

// mib formats bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
