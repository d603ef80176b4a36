package storage

import "sort"

// OffsetEntry is one stored consumer or group offset.
type OffsetEntry struct {
	Kind   ConsumerKind
	ID     uint32
	Offset uint64
}

// All returns every stored offset, ordered by kind then id (a replicated
// partition's snapshot carries them).
func (o *Offsets) All() []OffsetEntry {
	o.mu.Lock()
	out := make([]OffsetEntry, 0, len(o.m))
	for k, v := range o.m {
		out = append(out, OffsetEntry{Kind: k.kind, ID: k.id, Offset: v})
	}
	o.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].ID < out[j].ID
	})
	return out
}
