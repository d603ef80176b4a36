package dispatch

import (
	"time"

	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// Observer receives one Observation per request Serve answered (metrics,
// tracing). Observe runs on the connection's reader goroutine right after
// the answer is decided and before the transport writes it, so it must be
// cheap and must not block; it must not retain the Observation's slices.
type Observer interface {
	Observe(o Observation)
}

// Observation describes one served request. It is passed by value so an
// Observer call allocates nothing.
type Observation struct {
	// Code is the command code (for Register and Logout: LOGIN_REGISTER
	// and LOGOUT_USER; for a request refused before its command was known:
	// the header's code field).
	Code wire.Command
	// Transport is the connection's transport (session.TransportTCP...).
	Transport session.Transport
	// Status is the reply header status: 0 for an answer, an IggyError
	// code for a pre-commit denial. Result-framed rejections (status 0,
	// body [1][0][code]) count as 0.
	Status uint32
	// Evicted is set when the answer is an Eviction frame (Status is 0).
	Evicted bool
	// Start is when Serve began; Duration is how long it took to decide
	// the answer (writing it is not included).
	Start    time.Time
	Duration time.Duration
	// RequestBytes and ReplyBytes are the frame sizes, headers included
	// (the reply counts its file-backed Tail).
	RequestBytes int
	ReplyBytes   int
	// Body and Reply are the request body and the in-memory reply body.
	// Both are valid only during the Observe call.
	Body  []byte
	Reply []byte
}

// observe reports x to the dispatcher's Observer; Serve defers it only
// when an Observer is set, so without one a request costs one nil check.
func (d *Dispatcher) observe(x *Exchange, start time.Time) {
	o := Observation{
		Code:         x.Header.Code,
		Start:        start,
		Duration:     time.Since(start),
		RequestBytes: wire.HeaderSize + len(x.Body),
		ReplyBytes:   wire.HeaderSize + len(x.Out),
		Body:         x.Body,
		Reply:        x.Out,
		Evicted:      x.evicted,
	}
	if x.Info.Code != 0 {
		o.Code = x.Info.Code
	}
	if x.Conn != nil {
		o.Transport = x.Conn.Transport
	}
	if x.Tail != nil {
		o.ReplyBytes += int(x.Tail.Len())
	}
	if !x.evicted {
		o.Status = wire.PeekReplyStatus(x.Head[:])
	}
	d.observer.Observe(o)
}

// Observers fans one Observation out to several Observers, in order.
type Observers []Observer

// Observe implements Observer.
func (os Observers) Observe(o Observation) {
	for _, ob := range os {
		ob.Observe(o)
	}
}
