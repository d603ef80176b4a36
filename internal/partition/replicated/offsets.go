package replicated

import "github.com/iggo-dev/iggo/internal/storage"

// restoreOffsets makes the stored offsets exactly want.
func restoreOffsets(offs *storage.Offsets, want []storage.OffsetEntry) error {
	keep := make(map[storage.OffsetEntry]bool, len(want))
	for _, o := range want {
		keep[storage.OffsetEntry{Kind: o.Kind, ID: o.ID}] = true
		if cur, ok := offs.Get(o.Kind, o.ID); ok && cur == o.Offset {
			continue
		}
		if err := offs.Store(o.Kind, o.ID, o.Offset); err != nil {
			return err
		}
	}
	for _, o := range offs.All() {
		if !keep[storage.OffsetEntry{Kind: o.Kind, ID: o.ID}] {
			if _, err := offs.Delete(o.Kind, o.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
