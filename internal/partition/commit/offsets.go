package commit

import (
	"fmt"

	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// ApplyOffset applies an offset write (OffsetStore, OffsetAdvance or
// OffsetDelete) to offs: a store sets the offset, an advance only moves
// it forward, a delete removes it. It returns the status to answer:
// ConsumerOffsetNotFound (3021) for a delete of nothing, CannotAppendMessage
// (4010) with the error when storage failed.
func ApplyOffset(offs *storage.Offsets, w *Write) (uint32, error) {
	var err error
	switch w.Kind {
	case OffsetStore:
		err = offs.Store(w.Consumer, w.ID, w.Offset)
	case OffsetAdvance:
		_, err = offs.Advance(w.Consumer, w.ID, w.Offset)
	case OffsetDelete:
		var ok bool
		ok, err = offs.Delete(w.Consumer, w.ID)
		if err == nil && !ok {
			return wire.ErrConsumerOffsetNotFound.Code, nil
		}
	default:
		return wire.ErrInvalidCommand.Code, fmt.Errorf("commit: write kind %d is not an offset write", w.Kind)
	}
	if err != nil {
		return wire.ErrCannotAppendMessage.Code, err
	}
	return 0, nil
}
