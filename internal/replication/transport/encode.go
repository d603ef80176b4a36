package transport

// encode appends batch frames holding q (split when a frame would exceed
// the limit) and returns the buffer, the frame count and the envelopes
// too large to send at all (or that failed to marshal), in queue order.
// Each message is measured first and then marshalled straight into buf
// behind its length prefix, so a buffer with room enough (the writer
// reuses its own) takes no allocation at all.
func (p *peer) encode(buf []byte, q []Envelope) ([]byte, int, []Envelope) {
	limit := p.t.cfg.MaxFrameBytes
	var dropped []Envelope
	frames := 0
	for len(q) > 0 {
		start := len(buf)
		buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(frameBatch))
		// Reserve a fixed 5-byte uvarint slot for the count (at most
		// maxBatchEnvelopes) so items can be appended before it is known.
		countAt := len(buf)
		buf = append(buf, 0, 0, 0, 0, 0)
		n := 0
		for len(q) > 0 && n < maxBatchEnvelopes {
			size, body := envelopeSize(q[0])
			if size+1+5 > limit {
				dropped = append(dropped, q[0])
				q = q[1:]
				continue
			}
			if len(buf)-start-frameHeaderBytes+size > limit && n > 0 {
				break
			}
			var err error
			if buf, err = appendEnvelope(buf, q[0], body); err != nil {
				dropped = append(dropped, q[0])
				q = q[1:]
				continue
			}
			q = q[1:]
			n++
		}
		if n == 0 {
			buf = buf[:start]
			continue
		}
		putUvarint5(buf[countAt:], uint64(n))
		buf = endFrame(buf, start)
		frames++
	}
	return buf, frames, dropped
}

// encodable returns q without the envelopes of dropped (both in queue
// order, dropped a subsequence of q).
func encodable(q, dropped []Envelope) []Envelope {
	out := make([]Envelope, 0, len(q)-len(dropped))
	for _, e := range q {
		if len(dropped) > 0 && sameEnvelope(e, dropped[0]) {
			dropped = dropped[1:]
			continue
		}
		out = append(out, e)
	}
	return out
}

// sameEnvelope reports whether a and b are the same queued envelope.
func sameEnvelope(a, b Envelope) bool {
	return a.Msg == b.Msg && a.Group == b.Group && a.Kind == b.Kind && len(a.Data) == len(b.Data) &&
		(len(a.Data) == 0 || &a.Data[0] == &b.Data[0])
}

// withoutData returns q without the envelopes that carry data: what a
// failed write reports as unreachable (those may have reached the peer
// before the failure; their loss is announced as a disconnection).
func withoutData(q []Envelope) []Envelope {
	n := 0
	for _, e := range q {
		if e.Kind.CarriesData() {
			n++
		}
	}
	if n == 0 {
		return q
	}
	out := make([]Envelope, 0, len(q)-n)
	for _, e := range q {
		if !e.Kind.CarriesData() {
			out = append(out, e)
		}
	}
	return out
}

// putUvarint5 writes v as a 5-byte (padded) uvarint, which
// binary.Uvarint reads back unchanged.
func putUvarint5(b []byte, v uint64) {
	for i := range 4 {
		b[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	b[4] = byte(v & 0x7f)
}
