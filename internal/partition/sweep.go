package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SweepOrphans removes the partition data no live topic or partition owns:
// the leftovers of a topic, stream or partition deletion whose directory
// removal did not happen because the server stopped between the metadata
// commit and the removal. Such directories are never read again (a new
// topic gets a new incarnation) but would waste space forever.
//
// It must be called once at start-up, after the metadata plane replayed
// its log, because only then has every live topic incarnation and
// partition been announced through CreatePartitions; it is not safe to
// call while another resolver (a test catalog) may still create
// partitions. Under the data root it walks the layout
// {stream}/topics/{topic}-{incarnation}/partitions/{partition}/ and
// removes
//
//   - a topic directory whose (stream, topic, incarnation) is not an open
//     topic, with everything in it, and
//   - a partition directory of an open topic whose partition id the topic
//     does not have (open, stopped as corrupt, or failed to open).
//
// A live topic without partitions is never announced (the metadata plane
// calls CreatePartitions only for topics that have partitions), so its
// directory counts as orphaned; it can only hold partitions deleted
// earlier, and CreatePartitions recreates it when partitions are added.
//
// Only names that match the layout exactly (canonical decimal numbers,
// the literal "topics" and "partitions") are candidates; anything else is
// logged at warn and left alone. A topic directory whose incarnation is
// live under another (stream, topic) is also left alone (warn): the
// incarnation is unique, so this cannot come from this server. Every
// removal is logged at info with the path and the reason. Stream and
// "topics" directories left empty are removed. Errors are collected and
// the sweep continues; removed counts the topic and partition directories
// removed.
func (p *Plane) SweepOrphans() (removed int, err error) {
	// Holding the lock keeps CreatePartitions from creating a directory
	// the sweep is about to judge.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, nil
	}
	root := p.opts.Dir
	streams, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sweep: read %s: %w", root, err)
	}
	var errs []error
	for _, se := range streams {
		streamDir := filepath.Join(root, se.Name())
		streamID, ok := parseU32(se.Name())
		if !ok || !se.IsDir() {
			p.log.Warn("sweep: unexpected entry in the streams directory left alone", "path", streamDir)
			continue
		}
		topicsDir := filepath.Join(streamDir, topicsDirName)
		entries, err := os.ReadDir(streamDir)
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep: read %s: %w", streamDir, err))
			continue
		}
		for _, e := range entries {
			if e.Name() != topicsDirName || !e.IsDir() {
				p.log.Warn("sweep: unexpected entry in a stream directory left alone", "path", filepath.Join(streamDir, e.Name()))
			}
		}
		topics, err := os.ReadDir(topicsDir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep: read %s: %w", topicsDir, err))
			continue
		}
		for _, te := range topics {
			n, err := p.sweepTopic(streamID, topicsDir, te)
			removed += n
			if err != nil {
				errs = append(errs, err)
			}
		}
		p.removeIfEmpty(topicsDir)
		p.removeIfEmpty(streamDir)
	}
	return removed, errors.Join(errs...)
}

// sweepTopic judges one entry of a stream's topics directory. p.mu is held.
func (p *Plane) sweepTopic(streamID uint32, topicsDir string, te os.DirEntry) (int, error) {
	topicDir := filepath.Join(topicsDir, te.Name())
	topicID, inc, ok := parseTopicDirName(te.Name())
	if !ok || !te.IsDir() {
		p.log.Warn("sweep: unexpected entry in a topics directory left alone", "path", topicDir)
		return 0, nil
	}
	tp := p.topics[inc]
	if tp == nil {
		p.log.Info("sweep: removing orphaned topic directory", "path", topicDir,
			"reason", fmt.Sprintf("no live topic has incarnation %d (stream %d, topic %d was deleted)", inc, streamID, topicID))
		if err := os.RemoveAll(topicDir); err != nil {
			return 0, fmt.Errorf("sweep: remove %s: %w", topicDir, err)
		}
		return 1, nil
	}
	if tp.ref.StreamID != streamID || tp.ref.TopicID != topicID {
		p.log.Warn("sweep: directory names a live incarnation under another stream or topic; left alone",
			"path", topicDir, "live_stream", tp.ref.StreamID, "live_topic", tp.ref.TopicID)
		return 0, nil
	}
	entries, err := os.ReadDir(topicDir)
	if err != nil {
		return 0, fmt.Errorf("sweep: read %s: %w", topicDir, err)
	}
	for _, e := range entries {
		if e.Name() != partitionsDirName || !e.IsDir() {
			p.log.Warn("sweep: unexpected entry in a topic directory left alone", "path", filepath.Join(topicDir, e.Name()))
		}
	}
	partsDir := filepath.Join(topicDir, partitionsDirName)
	parts, err := os.ReadDir(partsDir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sweep: read %s: %w", partsDir, err)
	}
	removed := 0
	var errs []error
	for _, pe := range parts {
		partDir := filepath.Join(partsDir, pe.Name())
		id, ok := parseU32(pe.Name())
		if !ok || !pe.IsDir() {
			p.log.Warn("sweep: unexpected entry in a partitions directory left alone", "path", partDir)
			continue
		}
		if _, live := tp.parts[id]; live {
			continue
		}
		if _, live := tp.unopened[id]; live {
			continue
		}
		p.log.Info("sweep: removing orphaned partition directory", "path", partDir,
			"reason", fmt.Sprintf("topic %d/%d (incarnation %d) has no partition %d", streamID, topicID, inc, id))
		if err := os.RemoveAll(partDir); err != nil {
			errs = append(errs, fmt.Errorf("sweep: remove %s: %w", partDir, err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// parseU32 parses a canonical decimal uint32 (no sign, no leading zero
// unless it is "0"), the form TopicDir and PartitionDir write.
func parseU32(s string) (uint32, bool) {
	v, ok := parseCanonical(s, 32)
	return uint32(v), ok
}

// parseTopicDirName parses "{topic}-{incarnation}".
func parseTopicDirName(s string) (topic uint32, inc uint64, ok bool) {
	t, i, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	topic, ok = parseU32(t)
	if !ok {
		return 0, 0, false
	}
	inc, ok = parseCanonical(i, 64)
	return topic, inc, ok
}

func parseCanonical(s string, bits int) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil || strconv.FormatUint(v, 10) != s {
		return 0, false
	}
	return v, true
}
