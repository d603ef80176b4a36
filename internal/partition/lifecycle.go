package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// New returns a Plane storing data under opts.Dir and starts its
// retention loop and its scrubber. Partitions are opened by CreatePartitions (the metadata
// plane calls it while it replays its log at start-up).
func New(opts Options) (*Plane, error) {
	if opts.Dir == "" {
		return nil, errors.New("partition: Options.Dir is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = wire.MaxFrameSize
	}
	if opts.RetentionInterval == 0 {
		opts.RetentionInterval = DefaultRetentionInterval
	}
	p := &Plane{opts: opts, log: opts.Logger, topics: map[uint64]*topic{}, stop: make(chan struct{})}
	p.damaged = p.RebuildDamaged
	p.mode = localMode{p}
	if opts.Replicator != nil {
		p.mode = newReplicatedMode(p)
	}
	if opts.RetentionInterval > 0 {
		p.wg.Add(1)
		go p.retentionLoop(opts.RetentionInterval)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.stopScrub = cancel
	if opts.ScrubInterval > 0 {
		p.wg.Add(1)
		go p.scrubLoop(ctx, opts.ScrubInterval)
	}
	return p, nil
}

// Flush syncs every open partition.
func (p *Plane) Flush() error {
	var errs []error
	p.mu.RLock()
	var parts []*partition
	for _, tp := range p.topics {
		for _, part := range tp.parts {
			parts = append(parts, part)
		}
	}
	p.mu.RUnlock()
	for _, part := range parts {
		if part.log != nil {
			if err := part.log.Flush(); err != nil && !errors.Is(err, storage.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops retention and the scrubber, then flushes and closes every partition. Call it
// after the transports stopped serving.
func (p *Plane) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	topics := p.topics
	p.topics = map[uint64]*topic{}
	p.mu.Unlock()
	close(p.stop)
	p.stopScrub()
	p.wg.Wait()
	p.mode.close()
	var errs []error
	for _, tp := range topics {
		for _, part := range tp.parts {
			p.closeTier(part, false)
			if part.log != nil {
				if err := part.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
					errs = append(errs, fmt.Errorf("close partition %s: %w", part.dir, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func newReplicatedMode(p *Plane) replicatedMode {
	return replicatedMode{p: p, set: replicated.New(p.opts.Replicator, replicated.Options{
		Logger:        p.log,
		Clock:         p.opts.Clock,
		WindowClients: p.opts.WindowClients,
		LogStorage:    p.opts.LogStorage,
		Catalog:       p.catalog,
		OnDamaged: func(t catalog.TopicRef, id uint32, err error) {
			p.ReplicaDamaged(t, id, err)
		},
	})}
}
