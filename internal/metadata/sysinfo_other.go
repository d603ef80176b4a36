//go:build !linux

package metadata

import (
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// fillHost has no host figures off Linux: they stay 0 or empty.
func fillHost(st *wire.Stats, dataDir string) {}

// probe reports no CPU figures off Linux.
type probe struct{}

func (p *probe) cpu(now time.Time) (proc, total float32) { return 0, 0 }
