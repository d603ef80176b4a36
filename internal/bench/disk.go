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

// DiskBaseline is a plain write-and-sync loop in a directory: what one
// writer that waits for every write to be durable gets from that file
// system, the ceiling of a producer under enforce_fsync.
type DiskBaseline struct {
	// Dir is where it wrote; printed in the report but kept out of the
	// result file, which should not carry paths of the machine.
	Dir     string  `json:"-"`
	Seconds float64 `json:"seconds"`
	Bytes   uint64  `json:"bytes"`
	Writes  uint64  `json:"writes"`
	// Sync is "fdatasync" (Linux) or "fsync".
	Sync string  `json:"sync"`
	MBps float64 `json:"mb_per_second"`
	// SyncMillis is the mean time of one sync call.
	SyncMillis float64 `json:"mean_sync_ms"`
}

// MeasureDisk appends DiskBufferSize chunks to a new file in dir for d
// (at most maxDiskBaselineBytes), syncing the data after each write
// (fdatasync where the platform has it), then removes the file.
func MeasureDisk(ctx context.Context, dir string, d time.Duration) (*DiskBaseline, error) {
	f, err := os.CreateTemp(dir, ".iggo-disk-baseline-*")
	if err != nil {
		return nil, fmt.Errorf("disk baseline: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, DiskBufferSize)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	res := &DiskBaseline{Dir: dir, Sync: syncName}
	var inSync time.Duration
	start := time.Now()
	for time.Since(start) < d && res.Bytes < maxDiskBaselineBytes && ctx.Err() == nil {
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("disk baseline: write: %w", err)
		}
		t := time.Now()
		if err := syncData(f); err != nil {
			return nil, fmt.Errorf("disk baseline: %s: %w", syncName, err)
		}
		inSync += time.Since(t)
		res.Bytes += uint64(len(buf))
		res.Writes++
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.MBps = float64(res.Bytes) / res.Seconds / MB
	if res.Writes > 0 {
		res.SyncMillis = ms(inSync) / float64(res.Writes)
	}
	return res, nil
}
