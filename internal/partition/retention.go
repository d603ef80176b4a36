package partition

import (
	"errors"
	"math"
	"time"

	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// retentionLoop runs RunRetention every interval until Close.
func (p *Plane) retentionLoop(interval time.Duration) {
	defer p.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.RunRetention()
		}
	}
}

// retentionPolicy derives one partition's storage.Retention from the
// topic settings (semantics.md §4.4): message_expiry as the maximum age
// (0 and u64::MAX mean never) and a byte budget of max(max_topic_size /
// partitions, segment_size + max_message_size) (0 and u64::MAX mean
// unlimited).
func (p *Plane) retentionPolicy(s wire.TopicSettings, partitions int) storage.Retention {
	var r storage.Retention
	if s.MessageExpiry != 0 && s.MessageExpiry != wire.ExpiryNever {
		r.MaxAge = time.Duration(min(s.MessageExpiry, uint64(math.MaxInt64/int64(time.Microsecond)))) * time.Microsecond
	}
	if s.MaxTopicSize != 0 && s.MaxTopicSize != wire.SizeUnlimited && partitions > 0 {
		floor := s.SegmentSize + uint64(p.opts.MaxFrameBytes)
		r.MaxBytes = max(s.MaxTopicSize/uint64(partitions), floor)
	}
	return r
}

// RunRetention applies retention to every partition once and returns the
// total removed. The retention loop calls it; tests call it directly with
// an injected clock.
func (p *Plane) RunRetention() storage.Removed {
	type job struct {
		part *partition
		r    storage.Retention
	}
	var jobs []job
	p.mu.RLock()
	for _, tp := range p.topics {
		p.tierLocalRetention(tp)
		r := p.retentionPolicy(tp.ref.Settings, len(tp.parts))
		if r.MaxAge == 0 && r.MaxBytes == 0 {
			continue
		}
		for _, part := range tp.parts {
			if part.commit != nil {
				jobs = append(jobs, job{part, r})
			}
		}
	}
	p.mu.RUnlock()
	var total storage.Removed
	for _, j := range jobs {
		rm, err := j.part.retain(j.r)
		if err != nil && !errors.Is(err, storage.ErrClosed) {
			p.log.Warn("retention", "dir", j.part.dir, "err", err)
		}
		if rm.Segments > 0 {
			p.log.Debug("retention removed segments", "dir", j.part.dir, "segments", rm.Segments, "messages", rm.Messages, "bytes", rm.Bytes)
		}
		total.Segments += rm.Segments
		total.Messages += rm.Messages
		total.Bytes += rm.Bytes
	}
	return total
}
