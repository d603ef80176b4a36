package dispatch

import (
	"github.com/iggo-dev/iggo/wire"
)

func (d *Dispatcher) registerSystem() {
	d.Handle(wire.CmdPing, func(x *Exchange) { x.Reply(nil) })
	// FLUSH_UNSAVED_BUFFER is always FeatureUnavailable (semantics.md §4.3).
	d.Handle(wire.CmdFlushUnsavedBuffer, func(x *Exchange) { x.Deny(wire.ErrFeatureUnavailable.Code) })
}
