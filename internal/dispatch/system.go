package dispatch

import (
	"github.com/iggo-dev/iggo/wire"
)

func (d *Dispatcher) registerSystem() {
	// PING: empty request, empty reply; a body is undecodable (status 3).
	d.Handle(wire.CmdPing, func(x *Exchange) {
		if len(x.Body) != 0 {
			x.Deny(wire.ErrInvalidCommand.Code)
			return
		}
		x.Reply(nil)
	})
	// FLUSH_UNSAVED_BUFFER is always FeatureUnavailable (semantics.md §4.3).
	d.Handle(wire.CmdFlushUnsavedBuffer, func(x *Exchange) { x.Deny(wire.ErrFeatureUnavailable.Code) })
}
