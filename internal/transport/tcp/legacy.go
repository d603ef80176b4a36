package tcp

import (
	"encoding/binary"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// Pre-0.11 clients.
//
// SDK releases before protocol 0.11.0 frame a request as
// [length u32 LE = 4 + payload][command code u32 LE][payload] and read
// answers as [status u32 LE][length u32 LE][payload]. Such a client's login
// (code 38) is a few dozen bytes and then waits for its answer, while a
// 0.11 reader waits for 256 header bytes: without a check the client would
// hang until tcp.frame_read_timeout. The first frame of every connection is
// therefore checked once (legacyFrame); a legacy frame is answered in the
// legacy format with status 14003 (IncompatibleProtocolVersion) and the
// connection is closed. Later frames are not checked.
//
// Iggo choices (the reference server does not detect legacy clients): the
// status is 14003 because that code names the problem; the answer carries
// legacyReason as its payload, which SDKs that read an error payload show as
// the error message (the Java SDK 0.8.0, which has no name for 14003, prints
// "Server error [code=14003]: " and the reason); a client that does not read
// the payload loses nothing, since the connection closes after it.

// legacyReason is the payload of the legacy answer.
const legacyReason = "Iggo speaks Iggy protocol " + wire.ProtocolVersionString +
	"; this client uses the legacy pre-0.11 framing: upgrade the SDK"

// legacyAnswer returns the complete legacy answer: status, length, reason.
func legacyAnswer() []byte {
	b := binary.LittleEndian.AppendUint32(nil, wire.ErrIncompatibleProtocolVersion.Code)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(legacyReason)))
	return append(b, legacyReason...)
}

// legacyPrefix is the size of a legacy request prefix: length and code.
const legacyPrefix = 8

// legacyFrame reports whether b, the first bytes a connection sent (at
// most one header), is a legacy request, and returns its command code.
// maxLen bounds a plausible legacy length field.
//
// A 0.11 client sends zero in bytes 0..16 (the unused header checksum),
// while a legacy frame starts with a length of at least 4 and a command
// code of the protocol (the legacy codes share its numbering). Shorter than
// a header, b must also hold the complete legacy frame, since a legacy
// client then waits for an answer. A full header is legacy only if it
// cannot be read as a 0.11 request (command byte not 5 or size below 256),
// so a valid 0.11 request is never refused.
func legacyFrame(b []byte, maxLen uint32) (wire.Command, bool) {
	if len(b) < legacyPrefix {
		return 0, false
	}
	n := binary.LittleEndian.Uint32(b)
	code := wire.Command(binary.LittleEndian.Uint32(b[4:]))
	if n < 4 || n > maxLen {
		return 0, false
	}
	if _, known := wire.LookupCommand(code); !known {
		return 0, false
	}
	if len(b) < wire.HeaderSize {
		return code, uint64(n)+4 <= uint64(len(b))
	}
	return code, wire.PeekKind(b) != wire.KindRequest || wire.PeekSize(b) < wire.HeaderSize
}

// readFirst completes the first header of a connection from the n bytes
// already in c.hdr, like io.ReadFull, but returns early (fewer than 256
// bytes) once the bytes hold a complete legacy frame.
func (c *conn) readFirst(n int) (int, error) {
	for n < wire.HeaderSize {
		if _, ok := legacyFrame(c.hdr[:n], c.s.cfg.MaxFrameSize); ok {
			return n, nil
		}
		m, err := c.nc.Read(c.hdr[n:])
		n += m
		if err != nil {
			if _, ok := legacyFrame(c.hdr[:n], c.s.cfg.MaxFrameSize); ok {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// refuseLegacy answers a legacy first frame (the n bytes in c.hdr) and
// reports whether it did; the caller then ends the connection. The answer
// is written here, not by the writer goroutine, because it is not a
// 256-byte frame; nothing else has been queued on a connection's first
// frame.
func (c *conn) refuseLegacy(n int) bool {
	code, ok := legacyFrame(c.hdr[:n], c.s.cfg.MaxFrameSize)
	if !ok {
		return false
	}
	c.s.log.Warn("refusing client: legacy pre-0.11 framing, Iggo speaks protocol "+wire.ProtocolVersionString+": upgrade the SDK",
		"addr", c.sess.Addr, "command", uint32(code))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	if _, err := c.nc.Write(legacyAnswer()); err != nil {
		c.s.log.Debug("legacy answer not written", "addr", c.sess.Addr, "err", err)
	}
	return true
}
