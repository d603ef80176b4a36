package metrics

// Sample is the live state a Source reports at scrape time.
type Sample struct {
	// The reference's parity gauges.
	Streams, Topics, Partitions, Segments, Messages, Users, Clients uint64
	// Connections counts open binary-protocol connections by transport
	// label (TransportName).
	Connections map[string]int
	// Topics' message and byte counters.
	Traffic []TopicTraffic
	// Lag is the consumer-group lag of every (group, partition).
	Lag []GroupLag
	// DamagedRecords is the number of offsets quarantined now in the
	// partitions held here (records that failed verification and are not
	// served).
	DamagedRecords uint64
}

// TopicTraffic is one topic's counters since its partitions were opened.
type TopicTraffic struct {
	Stream, Topic                              string
	MessagesIn, BytesIn, MessagesOut, BytesOut uint64
}

// GroupLag is how many messages of one partition a consumer group has not
// committed yet: the partition's current offset minus the group's
// committed offset, or every retained message when the group has not
// committed on that partition.
type GroupLag struct {
	Stream, Topic, Group string
	Partition            uint32
	Lag                  uint64
}

// Source samples the server's state; it is called once per scrape, off the
// request path, and may take locks and allocate.
type Source interface {
	Sample() Sample
}

// SourceFunc adapts a function to Source.
type SourceFunc func() Sample

// Sample implements Source.
func (f SourceFunc) Sample() Sample { return f() }

// Lag computes GroupLag.Lag from a partition's current offset (the last
// stored message), its retained message count and the group's committed
// offset (ok false when it has none).
func Lag(current, messages, committed uint64, ok bool) uint64 {
	if !ok {
		return messages
	}
	if messages == 0 || committed >= current {
		return 0
	}
	return current - committed
}
