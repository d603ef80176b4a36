package wire

import (
	"fmt"
	"io"
)

// Answer is one server→client frame as a raw-protocol reader sees it: a
// reply or an eviction, and the body after the header.
type Answer struct {
	Kind     FrameKind
	Reply    ReplyHeader
	Eviction EvictionHeader
	Body     []byte
}

// ReadAnswer reads one reply or eviction frame from r: the header, checked
// for its size and kind, then the body (a fresh slice). Tools and tests
// that speak the protocol byte by byte use it; the SDK has its own pooled
// reader.
func ReadAnswer(r io.Reader) (Answer, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Answer{}, err
	}
	a := Answer{Kind: PeekKind(hdr[:])}
	size := PeekSize(hdr[:])
	if size < HeaderSize || size > MaxFrameSize {
		return a, fmt.Errorf("frame size %d out of range", size)
	}
	switch a.Kind {
	case KindReply:
		if err := a.Reply.Decode(hdr[:]); err != nil {
			return a, fmt.Errorf("reply header: %w", err)
		}
	case KindEviction:
		if err := a.Eviction.Decode(hdr[:]); err != nil {
			return a, fmt.Errorf("eviction header: %w", err)
		}
	default:
		return a, fmt.Errorf("unexpected frame kind %v", a.Kind)
	}
	if size > HeaderSize {
		a.Body = make([]byte, size-HeaderSize)
		if _, err := io.ReadFull(r, a.Body); err != nil {
			return a, err
		}
	}
	return a, nil
}
