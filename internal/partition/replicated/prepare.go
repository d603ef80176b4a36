package replicated

import (
	"encoding/binary"
	"fmt"

	"github.com/iggo-dev/iggo/wire"
)

// prepare is the group's replication.GroupOptions.Prepare hook (on the
// loop, in log order, leader only). Nothing is admitted before the
// start-up replay has applied again (errReplaying). A windowed request is
// refused when an earlier copy is in the log unapplied (errInFlight) or
// committed (errDuplicate) (requests.go). A send is stamped in place with
// base offset = the stamping tail and timestamp = max(now, last stamped
// timestamp) in the entry header and in the batch (partition id, base
// offset, base timestamp, batch checksum), unless a purge in the log has
// not applied yet (errPurgePending: the handler retries); accepted
// advances the tail. A purge whose identity the log holds or that applied
// here is refused (ErrPurgeKnown), so two nodes proposing the same purge
// purge once; accepted resets the tail to 0. Other entries pass unchanged.
func (rep *Replica) prepare(data []byte) (func(), error) {
	if len(data) < entryCommonLen {
		return func() {}, nil
	}
	stamp := rep.stamp.Load()
	if !stamp.replayDone() {
		return nil, errReplaying
	}
	key, windowed := windowKeyOf(data)
	if windowed {
		if err := rep.reqs.check(key); err != nil {
			return nil, err
		}
	}
	bind := func() {
		if windowed {
			rep.reqs.accept(key)
		}
	}
	switch data[0] {
	case entrySend:
		if stamp.purgePending() {
			return nil, errPurgePending
		}
		if len(data) < entrySendLen+wire.BatchHeaderSize {
			return nil, fmt.Errorf("%w: send of %d bytes", errBadEntry, len(data))
		}
		batch, _, err := wire.ParseBatch(data[entrySendLen:])
		if err != nil {
			return nil, fmt.Errorf("stamp batch: %w", err)
		}
		count := binary.LittleEndian.Uint32(data[offSendCount:])
		base, last := stamp.Tail()
		now := uint64(max(rep.set.opts.Clock().UnixMicro(), 0))
		ts := max(now, last)
		binary.LittleEndian.PutUint64(data[offSendBase:], base)
		binary.LittleEndian.PutUint64(data[offSendTs:], ts)
		batch.Stamp(uint64(rep.part.ID), base, ts)
		return func() { bind(); stamp.setMark(markBatch, base+uint64(count), ts) }, nil
	case entryPurge:
		id := purgeIDOf(data)
		if id != 0 && (stamp.purgeInLog(id) || id <= rep.purgeID.Load()) {
			return nil, ErrPurgeKnown
		}
		return func() { stamp.acceptPurge(id) }, nil
	}
	return bind, nil
}
