package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// frameType is the first byte of a frame body.
type frameType uint8

// Frame types. The handshake types are only valid before Welcome.
const (
	frameBatch     frameType = 1
	frameHello     frameType = 2
	frameChallenge frameType = 3
	frameFinish    frameType = 4
	frameWelcome   frameType = 5
	frameReject    frameType = 6
)

// frameHeaderBytes is the length and checksum prefix.
const frameHeaderBytes = 8

// DefaultMaxFrameBytes bounds one frame (a raft snapshot travels in one
// message, so it must fit).
const DefaultMaxFrameBytes = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errGarbage marks a frame that is not a valid frame: bad length or
// checksum. The connection is closed.
var errGarbage = errors.New("garbage frame")

// beginFrame reserves the prefix of a frame of type t at the end of dst
// and returns the buffer and the start of the frame.
func beginFrame(dst []byte, t frameType) ([]byte, int) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0, byte(t))
	return dst, start
}

// endFrame fills the length and checksum of the frame that begins at
// start.
func endFrame(dst []byte, start int) []byte {
	body := dst[start+frameHeaderBytes:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(body, crcTable))
	return dst
}

// appendFrame appends a whole frame of type t with payload p.
func appendFrame(dst []byte, t frameType, p []byte) []byte {
	dst, start := beginFrame(dst, t)
	dst = append(dst, p...)
	return endFrame(dst, start)
}

// readFrame reads one frame into buf (grown as needed) and returns its
// type and payload, which alias buf.
func readFrame(r io.Reader, buf []byte, maxBytes int) (frameType, []byte, []byte, error) {
	var hdr [frameHeaderBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, buf, err
	}
	n := binary.LittleEndian.Uint32(hdr[:4])
	if n < 1 || uint64(n) > uint64(maxBytes) {
		return 0, nil, buf, fmt.Errorf("%w: body length %d outside 1..=%d", errGarbage, n, maxBytes)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	body := buf[:n]
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, buf, err
	}
	if got, want := crc32.Checksum(body, crcTable), binary.LittleEndian.Uint32(hdr[4:]); got != want {
		return 0, nil, buf, fmt.Errorf("%w: checksum %08x, header says %08x", errGarbage, got, want)
	}
	return frameType(body[0]), body[1:], buf, nil
}
