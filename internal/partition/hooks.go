package partition

import (
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
)

// What the plane tells the rest of the server about damaged data: the
// observers the metrics implement and the hook of Options.OnDamage.

// RebuildObserver is told about rebuilds (metrics): Damaged when a
// replica is found damaged and its rebuild starts, Rebuilt when the
// rebuilt replica is a voter again.
type RebuildObserver interface {
	ReplicaDamaged()
	ReplicaRebuilt()
}

// ScrubObserver receives the scrubber's counts (the server's metrics).
// Its methods must be cheap and safe for concurrent use.
type ScrubObserver interface {
	// DamageFound counts n damaged ranges newly found by source.
	DamageFound(source string, n int)
	// ScrubRead counts bytes read and verified.
	ScrubRead(bytes int64)
	// ScrubPass counts one full pass of the background scrubber.
	ScrubPass()
}

// DamageHook receives the damage newly found in partition id of topic ref
// by the scrubber or VERIFY_PARTITION (Options.OnDamage). It is called
// from the scrubbing goroutine or the request, after the damage was
// quarantined and logged; it must not block for long (start the repair
// elsewhere).
type DamageHook func(ref catalog.TopicRef, id uint32, found []storage.Damage)
