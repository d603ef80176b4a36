package partition

import "sync/atomic"

// traffic counts what one partition took in (committed appends) and gave
// out (polls that returned messages) since it was opened. It lives in the
// partition struct the send and poll paths already hold, so counting is
// four atomic adds and no lookup or allocation; the metrics collector sums
// the partitions of a topic at scrape time (Plane.Traffic). Counters
// restart at zero when the process restarts or the partition is
// re-created, which Prometheus reads as a counter reset.
type traffic struct {
	msgsIn, bytesIn, msgsOut, bytesOut atomic.Uint64
}

// in counts a committed append of msgs messages in a record of bytes bytes
// (nothing when err is set).
func (t *traffic) in(err error, msgs uint32, bytes int) {
	if err != nil {
		return
	}
	t.msgsIn.Add(uint64(msgs))
	t.bytesIn.Add(uint64(bytes))
}

// out counts a poll answer of msgs messages in bytes bytes of batches.
func (t *traffic) out(msgs uint64, bytes int64) {
	t.msgsOut.Add(msgs)
	t.bytesOut.Add(uint64(bytes))
}
