package metadata

import (
	"context"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

// AwaitRetried is the dispatcher's hook for a retried metadata request
// whose reply the client table holds (dispatch.Options.Retried). The
// reply of PURGE_TOPIC, PURGE_STREAM and DELETE_CONSUMER_GROUP waits for
// this node's partitions to apply the purge or the offset deletion
// (awaitEffects), and is 57 when they did not within ReplicaTimeout,
// although the command committed and its cached reply is a success. A
// client retries after that 57 with the same request, so the retry waits
// the same way before the cached success goes out again, and is answered
// 57 again (0 otherwise: send the cached reply) while the partitions
// still want the purge or deletion. Other commands, a body that does not
// decode (the cached reply is what it got), and a stream or topic that is
// gone pass at once.
func (s *Store) AwaitRetried(cmd wire.Command, body []byte) uint32 {
	aw, ok := s.data.(catalog.Awaiter)
	if !ok {
		return 0
	}
	refs := s.retriedTopics(cmd, body)
	if len(refs) == 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReplicaTimeout)
	defer cancel()
	for _, ref := range refs {
		if err := aw.AwaitPartitions(ctx, ref); err != nil {
			s.log.Warn("retried purge or group-offset deletion not yet applied to the partitions; answered 57 again, it still applies",
				"stream", ref.StreamID, "topic", ref.TopicID, "err", err)
			return wire.ErrTransientNotCommitted.Code
		}
	}
	return 0
}

// retriedTopics returns the topics whose partitions a retry of cmd waits
// for, as they are now.
func (s *Store) retriedTopics(cmd wire.Command, body []byte) []catalog.TopicRef {
	var sid, tid wire.Identifier
	switch cmd {
	case wire.CmdPurgeTopic:
		var p wire.PurgeTopic
		if p.Decode(body) != nil {
			return nil
		}
		sid, tid = p.StreamID, p.TopicID
	case wire.CmdDeleteConsumerGroup:
		var d wire.DeleteConsumerGroup
		if d.Decode(body) != nil {
			return nil
		}
		sid, tid = d.StreamID, d.TopicID
	case wire.CmdPurgeStream:
		var p wire.PurgeStream
		if p.Decode(body) != nil {
			return nil
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		st := s.st.stream(p.StreamID)
		if st == nil {
			return nil
		}
		refs := make([]catalog.TopicRef, 0, len(st.Topics))
		for _, id := range sortedKeys(st.Topics) {
			refs = append(refs, ref(st, st.Topics[id]))
		}
		return refs
	default:
		return nil
	}
	r, _, err := s.ResolveTopic(sid, tid)
	if err != nil {
		return nil
	}
	return []catalog.TopicRef{r}
}
