package broker

import (
	"github.com/iggo-dev/iggo/wire"
)

// Descriptor room for new partitions (cluster mode).
//
// A partition hosted in cluster mode keeps three descriptors open on
// every node (its active segment, its raft log file and the raft commit
// file). A node out of descriptors cannot start a partition's raft group
// (an ERROR per partition; the other nodes serve it) and soon cannot
// accept connections either, so the leader refuses CREATE_TOPIC and
// CREATE_PARTITIONS with TooManyPartitions (2015) when the partitions
// they add would not fit its own limit: open descriptors + 3 per new
// partition + fdReserve must stay within the soft RLIMIT_NOFILE. The
// check is the leader's: a follower with a lower limit still logs its
// ERRORs. Where the limit cannot be read (not Linux) nothing is refused.

const (
	// fdsPerPartition are the descriptors a cluster partition holds.
	fdsPerPartition = 3
	// fdReserve is kept free for connections, sealed segments and
	// the metadata log.
	fdReserve = 256
)

// FileLimit reports the process's open descriptors and its soft limit
// (ok false when unknown).
type FileLimit func() (open, limit int, ok bool)

// WithFileLimit replaces how the broker reads its descriptor use and
// limit (tests).
func WithFileLimit(f FileLimit) Option { return func(o *options) { o.fileLimit = f } }

// partitionRoom answers whether add more partitions fit this node's
// descriptor limit: 0, or TooManyPartitions with a WARN line.
func (b *Broker) partitionRoom(add uint32) uint32 {
	f := b.opts.fileLimit
	if f == nil {
		f = processFileLimit
	}
	open, limit, ok := f()
	if !ok {
		return 0
	}
	need := open + fdsPerPartition*int(add) + fdReserve
	if need <= limit {
		return 0
	}
	b.log.Warn("partitions refused: they would not fit this node's open-file limit (raise ulimit -n)",
		"partitions", add, "open_files", open, "limit", limit, "needed", need, "per_partition", fdsPerPartition, "reserve", fdReserve)
	return wire.ErrTooManyPartitions.Code
}
