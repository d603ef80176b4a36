package metadata

import "github.com/iggo-dev/iggo/internal/catalog"

// Inventory is a point-in-time listing of the committed streams, topics,
// partitions, consumer groups and the user count, for the metrics
// collector (sampled at scrape time, never maintained on a mutation path).
type Inventory struct {
	// Streams and Users are counts; Topics lists every topic.
	Streams int
	Users   int
	Topics  []InventoryTopic
}

// InventoryTopic is one topic of an Inventory.
type InventoryTopic struct {
	// Ref names the topic incarnation for the partition plane.
	Ref catalog.TopicRef
	// StreamName and Name are the stream's and the topic's names.
	StreamName string
	Name       string
	// Partitions are the partition ids, ascending.
	Partitions []uint32
	// Groups are the topic's consumer groups, by ascending id.
	Groups []InventoryGroup
}

// InventoryGroup is one consumer group of an InventoryTopic.
type InventoryGroup struct {
	ID   uint32
	Name string
}

// Inventory returns the committed state's listing in ascending (stream,
// topic, group) order. It holds the state's read lock while copying.
func (s *Store) Inventory() Inventory {
	s.mu.RLock()
	defer s.mu.RUnlock()
	inv := Inventory{Streams: len(s.st.streams), Users: len(s.st.users)}
	for _, sid := range sortedKeys(s.st.streams) {
		st := s.st.streams[sid]
		for _, tid := range sortedKeys(st.Topics) {
			t := st.Topics[tid]
			it := InventoryTopic{Ref: ref(st, t), StreamName: st.Name, Name: t.Name, Partitions: t.partitionIDs()}
			for _, gid := range sortedKeys(t.Groups) {
				it.Groups = append(it.Groups, InventoryGroup{ID: gid, Name: t.Groups[gid].Name})
			}
			inv.Topics = append(inv.Topics, it)
		}
	}
	return inv
}
