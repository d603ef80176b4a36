package tier

import (
	"fmt"
	"strings"
)

// Object keys, under the configured prefix (which the bucket client adds):
//
//	streams/{stream}/topics/{topic}-{incarnation}/partitions/{partition}/e{epoch}/{start:020}.log
//	                                                                             /{start:020}.index
//
// The topic incarnation keeps a topic created again under a recycled id
// apart from the deleted one, the purge epoch keeps offsets that restart
// at 0 apart, and the start offset names the segment as on local disk. A
// segment uploaded again after a crash gets the same key, so the bucket
// never holds two copies.

// PartitionRef names one partition incarnation in the bucket.
type PartitionRef struct {
	// StreamID and TopicID are the numeric ids.
	StreamID, TopicID uint32
	// Incarnation is the topic's incarnation (catalog.TopicRef).
	Incarnation uint64
	// Partition is the partition id.
	Partition uint32
}

// TopicPrefix is the relative key prefix of every object of the topic
// incarnation (deleted with the topic).
func TopicPrefix(streamID, topicID uint32, incarnation uint64) string {
	return fmt.Sprintf("streams/%d/topics/%d-%d/", streamID, topicID, incarnation)
}

// prefix is the relative key prefix of the partition's objects.
func (r PartitionRef) prefix() string {
	return TopicPrefix(r.StreamID, r.TopicID, r.Incarnation) + fmt.Sprintf("partitions/%d/", r.Partition)
}

// segmentKey is the relative key of the log object of the segment at
// start in purge epoch epoch.
func (r PartitionRef) segmentKey(epoch, start uint64) string {
	return fmt.Sprintf("%se%d/%020d.log", r.prefix(), epoch, start)
}

// IndexKey is the key of the index object of the log object key.
func IndexKey(key string) string { return strings.TrimSuffix(key, ".log") + ".index" }

// String names the partition in logs.
func (r PartitionRef) String() string {
	return fmt.Sprintf("%d/%d/%d", r.StreamID, r.TopicID, r.Partition)
}
