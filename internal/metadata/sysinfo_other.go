//go:build !linux && !darwin && !freebsd && !windows

package metadata

import (
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// fillHost has no host figures on this OS: they stay 0 or empty.
func fillHost(st *wire.Stats, dataDir string) {}

// processCPU is unknown on this OS.
func processCPU() time.Duration { return 0 }

// systemCPU is unknown on this OS.
func systemCPU() (busy, total uint64) { return 0, 0 }
