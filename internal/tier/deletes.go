package tier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// prefixQueueName is the file in the state directory listing the key
// prefixes (deleted topics and partitions) whose objects are still to be
// deleted, one per line.
const prefixQueueName = "delete.queue"

// deleteQueued deletes the objects the manifest stopped listing and then
// forgets their keys. A failure leaves them queued for the next pass.
func (p *Partition) deleteQueued(ctx context.Context) error {
	keys := p.man.Load().Deletes
	if len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		rctx, cancel := p.m.requestCtx(ctx)
		err := p.m.bucket.Delete(rctx, k)
		cancel()
		if err != nil {
			return fmt.Errorf("delete %s: %w", k, err)
		}
		p.m.cache.Drop(k)
		p.m.met.deletedObjects.Add(1)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.man.Load().clone()
	n.Deletes = slices.DeleteFunc(n.Deletes, func(k string) bool { return slices.Contains(keys, k) })
	return p.commit(n)
}

// loadPrefixes reads the queue of prefixes to delete.
func loadPrefixes(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return strings.Fields(string(b)), nil
}

// savePrefixesLocked writes the queue. Caller holds m.mu.
func (m *Manager) savePrefixesLocked() error {
	return fileio.WriteFileAtomic(filepath.Join(m.opts.StateDir, prefixQueueName),
		[]byte(strings.Join(m.prefixes, "\n")))
}

// deletePrefix queues every object under a full key prefix for deletion;
// the queue is durable, so a restart goes on with it.
func (m *Manager) deletePrefix(prefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Contains(m.prefixes, prefix) {
		return nil
	}
	m.prefixes = append(m.prefixes, prefix)
	if err := m.savePrefixesLocked(); err != nil {
		return fmt.Errorf("queue deletion of %s: %w", prefix, err)
	}
	m.poke()
	return nil
}

// DeleteTopic queues the deletion of every object of a deleted topic
// incarnation.
func (m *Manager) DeleteTopic(streamID, topicID uint32, incarnation uint64) error {
	return m.deletePrefix(m.bucket.Key(TopicPrefix(streamID, topicID, incarnation)))
}

// deletePrefixes works through the queue of prefixes, oldest first.
func (m *Manager) deletePrefixes() {
	m.mu.Lock()
	queue := slices.Clone(m.prefixes)
	m.mu.Unlock()
	for _, prefix := range queue {
		ctx, cancel := m.requestCtx(m.ctx)
		n, err := m.bucket.DeletePrefix(ctx, prefix)
		cancel()
		m.mu.Lock()
		if err != nil {
			if m.ctx.Err() == nil {
				m.warn("remote tier: deleting the objects of a deleted topic or partition failed; retried",
					"prefix", prefix, "err", err)
			}
			m.mu.Unlock()
			return
		}
		m.met.deletedObjects.Add(uint64(n))
		m.prefixes = slices.DeleteFunc(m.prefixes, func(s string) bool { return s == prefix })
		if err := m.savePrefixesLocked(); err != nil {
			m.log.Warn("remote tier: saving the deletion queue failed", "err", err)
		}
		m.mu.Unlock()
	}
}
