package bench

import (
	"context"
	"fmt"
	"os"
	"time"
)

// DiskBufferSize is the write size of the disk baseline: one default
// batch, as the broker appends it.
const DiskBufferSize = 1 << 20

// maxDiskBaselineBytes bounds the file the disk baseline writes, whatever
// its duration.
const maxDiskBaselineBytes = 4 << 30

// DiskBaseline is a plain write loop in a directory. With a sync after
// every write (MeasureDisk) it is what one writer that waits for every
// write to be durable gets from that file system, the ceiling of a
// producer under enforce_fsync; without (MeasureCache) what one writer
// gets from its page cache, the ceiling of a producer without it.
type DiskBaseline struct {
	// Dir is where it wrote; printed in the report but kept out of the
	// result file, which should not carry paths of the machine.
	Dir     string  `json:"-"`
	Seconds float64 `json:"seconds"`
	Bytes   uint64  `json:"bytes"`
	Writes  uint64  `json:"writes"`
	// Sync is "fdatasync" (Linux) or "fsync"; "none" for the page-cache
	// baseline.
	Sync string  `json:"sync"`
	MBps float64 `json:"mb_per_second"`
	// SyncMillis is the mean time of one sync call.
	SyncMillis float64 `json:"mean_sync_ms"`
}

// MeasureDisk appends DiskBufferSize chunks to a new file in dir for d
// (at most maxDiskBaselineBytes), syncing the data after each write
// (fdatasync where the platform has it), then removes the file.
func MeasureDisk(ctx context.Context, dir string, d time.Duration) (*DiskBaseline, error) {
	return measureWrites(ctx, "disk baseline", dir, d, maxDiskBaselineBytes, true)
}

// maxCacheBaselineBytes bounds the file the page-cache baseline writes:
// its pages are dropped unwritten when the file is removed, but beyond
// the kernel's background threshold write-back would start and keep the
// disk busy during the benchmark.
const maxCacheBaselineBytes = 1 << 30

// MeasureCache appends DiskBufferSize chunks to a new file in dir for d
// (at most maxCacheBaselineBytes) without syncing, then removes the file:
// what one writer gets from the page cache of that file system, the
// ceiling of a producer without enforce_fsync. It includes what the
// machine charges for memory the page cache takes (on a virtual machine
// that returns free memory to its host, the first touch of every page);
// its Sync is "none".
func MeasureCache(ctx context.Context, dir string, d time.Duration) (*DiskBaseline, error) {
	return measureWrites(ctx, "page-cache baseline", dir, d, maxCacheBaselineBytes, false)
}

// measureWrites is the write loop of both file baselines (what names it
// in errors).
func measureWrites(ctx context.Context, what, dir string, d time.Duration, limit uint64, sync bool) (*DiskBaseline, error) {
	f, err := os.CreateTemp(dir, ".iggo-baseline-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, DiskBufferSize)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	res := &DiskBaseline{Dir: dir, Sync: syncName}
	if !sync {
		res.Sync = "none"
	}
	var inSync time.Duration
	start := time.Now()
	for time.Since(start) < d && res.Bytes < limit && ctx.Err() == nil {
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("%s: write: %w", what, err)
		}
		if sync {
			t := time.Now()
			if err := syncData(f); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", what, syncName, err)
			}
			inSync += time.Since(t)
		}
		res.Bytes += uint64(len(buf))
		res.Writes++
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.MBps = float64(res.Bytes) / res.Seconds / MB
	if sync && res.Writes > 0 {
		res.SyncMillis = ms(inSync) / float64(res.Writes)
	}
	return res, nil
}
