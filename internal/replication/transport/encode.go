package transport

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"net"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// vecMinBytes is the size from which the data of an envelope that
// CarriesData is not copied into the writer's buffer but written from
// where it lies (a vectored write): a forwarded request or a poll reply
// of megabytes.
const vecMinBytes = 64 << 10

// extData is data written from where it lies: before buf[at:]. entry
// marks the data of a raft entry, whose checksum a crcCache may remember.
type extData struct {
	at    int
	data  []byte
	entry bool
}

// encode appends batch frames holding q (split when a frame would exceed
// the limit) and returns the buffer, the frame count and the envelopes
// too large to send at all (or that failed to marshal), in queue order.
// Each message is measured first and then marshalled straight into buf
// behind its length prefix, so a buffer with room enough (the writer
// reuses its own) takes no allocation at all.
func (p *peer) encode(buf []byte, q []Envelope) ([]byte, int, []Envelope) {
	buf, _, frames, dropped := p.encodeVec(buf, q, math.MaxInt)
	return buf, frames, dropped
}

// encodeVec is encode that leaves the data of envelopes of at least
// vecMin bytes out of buf: ext lists them with the positions of buf they
// go before (vectors interleaves them); the frames' lengths and checksums
// cover them.
func (p *peer) encodeVec(buf []byte, q []Envelope, vecMin int) ([]byte, []extData, int, []Envelope) {
	limit := p.t.cfg.MaxFrameBytes
	var dropped []Envelope
	var ext []extData
	frames := 0
	for len(q) > 0 {
		start := len(buf)
		firstExt := len(ext)
		extBytes := 0 // of this frame
		buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(frameBatch))
		// Reserve a fixed 5-byte uvarint slot for the count (at most
		// maxBatchEnvelopes) so items can be appended before it is known.
		countAt := len(buf)
		buf = append(buf, 0, 0, 0, 0, 0)
		n := 0
		for len(q) > 0 && n < maxBatchEnvelopes {
			e := q[0]
			// A raft message with large entries leaves their data out
			// (msgvec.go): head is the message without them.
			var head *raftpb.Message
			var size, body int
			if e.Kind == KindRaft && e.Msg != nil && hasLargeEntry(e.Msg, vecMin) {
				head = msgHead(e.Msg)
				body = msgVecSize(e.Msg, proto.Size(head))
				size = uvarintLen(e.Group) + 1 + uvarintLen(uint64(body)) + body
			} else {
				size, body = envelopeSize(e)
			}
			if size+1+5 > limit {
				dropped = append(dropped, e)
				q = q[1:]
				continue
			}
			if len(buf)+extBytes-start-frameHeaderBytes+size > limit && n > 0 {
				break
			}
			var err error
			switch {
			case head != nil:
				at, atExt := len(buf), len(ext)
				var moved int
				buf, ext, moved, err = appendMsgVec(putEnvelopeHead(buf, e.Group, e.Kind, body), ext, e.Msg, head, vecMin)
				if err != nil {
					buf, ext = buf[:at], ext[:atExt]
				}
				extBytes += moved
			case e.Kind.CarriesData() && len(e.Data) >= vecMin:
				buf = append(putEnvelopeHead(buf, e.Group, e.Kind, body), e.Prefix...)
				ext = append(ext, extData{at: len(buf), data: e.Data})
				extBytes += len(e.Data)
			default:
				buf, err = appendEnvelope(buf, e, body)
			}
			q = q[1:]
			if err != nil {
				dropped = append(dropped, e)
				continue
			}
			n++
		}
		if n == 0 {
			buf = buf[:start]
			continue
		}
		putUvarint5(buf[countAt:], uint64(n))
		if firstExt == len(ext) {
			buf = endFrame(buf, start)
		} else {
			endFrameExt(buf, start, ext[firstExt:], extBytes, &p.t.crcs)
		}
		frames++
	}
	return buf, ext, frames, dropped
}

// endFrameExt fills the length and checksum of the frame that begins at
// start, whose body also holds the external data ext (extBytes in all).
// The sums of entry data come from crcs (nil: computed here).
func endFrameExt(buf []byte, start int, ext []extData, extBytes int, crcs *crcCache) {
	at := start + frameHeaderBytes
	var crc uint32
	for _, x := range ext {
		crc = crc32.Update(crc, crcTable, buf[at:x.at])
		if x.entry && crcs != nil && len(x.data) > 0 {
			crc = crcCombine(crc, crcs.sum(x.data), len(x.data))
		} else {
			crc = crc32.Update(crc, crcTable, x.data)
		}
		at = x.at
	}
	crc = crc32.Update(crc, crcTable, buf[at:])
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(buf)-start-frameHeaderBytes+extBytes))
	binary.LittleEndian.PutUint32(buf[start+4:], crc)
}

// vectors is buf with the external data ext put in place, for one
// vectored write.
func vectors(buf []byte, ext []extData) net.Buffers {
	out := make(net.Buffers, 0, 2*len(ext)+1)
	at := 0
	for _, x := range ext {
		if x.at > at {
			out = append(out, buf[at:x.at])
		}
		out = append(out, x.data)
		at = x.at
	}
	if at < len(buf) {
		out = append(out, buf[at:])
	}
	return out
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
	return a.Msg == b.Msg && a.Group == b.Group && a.Kind == b.Kind && len(a.Data) == len(b.Data) && len(a.Prefix) == len(b.Prefix) &&
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

// appendMsgVec appends m's encoding (head, then every entry) to buf;
// the data of an entry of at least vecMin bytes is not copied but added
// to ext at its position. It returns the buffers and the bytes left to
// ext.
func appendMsgVec(buf []byte, ext []extData, m, head *raftpb.Message, vecMin int) ([]byte, []extData, int, error) {
	buf, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(buf, head)
	if err != nil {
		return buf, ext, 0, fmt.Errorf("marshal raft message: %w", err)
	}
	extBytes := 0
	for _, e := range m.Entries {
		buf = protowire.AppendTag(buf, msgFieldEntries, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(entryFieldsSize(e)))
		if e.Type != nil {
			buf = protowire.AppendTag(buf, entFieldType, protowire.VarintType)
			buf = protowire.AppendVarint(buf, uint64(*e.Type))
		}
		if e.Term != nil {
			buf = protowire.AppendTag(buf, entFieldTerm, protowire.VarintType)
			buf = protowire.AppendVarint(buf, *e.Term)
		}
		if e.Index != nil {
			buf = protowire.AppendTag(buf, entFieldIndex, protowire.VarintType)
			buf = protowire.AppendVarint(buf, *e.Index)
		}
		if e.Data == nil {
			continue
		}
		buf = protowire.AppendTag(buf, entFieldData, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(len(e.Data)))
		if len(e.Data) >= vecMin {
			ext = append(ext, extData{at: len(buf), data: e.Data, entry: true})
			extBytes += len(e.Data)
			continue
		}
		buf = append(buf, e.Data...)
	}
	return buf, ext, extBytes, nil
}
