package partition

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// maxRetainedRecordBuf bounds the edge-record buffer a pooled pollReply
// keeps between polls.
const maxRetainedRecordBuf = 4 << 20

// pollReply is a poll answer: head (the 16-byte prefix plus a first
// record sliced in memory) is the in-memory body; the Tail is the run of
// whole stored records (file extents, sent as they are) followed by a
// last record sliced in memory. It implements dispatch.Tail.
type pollReply struct {
	head []byte
	mids []storage.Extent
	post []byte
	rr   storage.ReadResult
	rec  []byte
	n    int64
}

var pollReplies = sync.Pool{New: func() any { return new(pollReply) }}

func getPollReply() *pollReply { return pollReplies.Get().(*pollReply) }

// Len implements dispatch.Tail.
func (r *pollReply) Len() int64 { return r.n }

// WriteTo implements dispatch.Tail.
func (r *pollReply) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for i := range r.mids {
		n, err := r.mids[i].WriteTo(w)
		total += n
		if err != nil {
			return total, err
		}
	}
	if len(r.post) > 0 {
		n, err := w.Write(r.post)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// appendTo appends the Tail's bytes to dst, the stored records read
// straight into it (a forwarded poll, forward_serve.go).
func (r *pollReply) appendTo(dst []byte) ([]byte, error) {
	for i := range r.mids {
		e := &r.mids[i]
		n := len(dst)
		dst = slices.Grow(dst, int(e.Len))[:n+int(e.Len)]
		if _, err := e.ReadAt(dst[n:], 0); err != nil {
			return dst[:n], fmt.Errorf("read stored records: %w", err)
		}
	}
	return append(dst, r.post...), nil
}

// Release implements dispatch.Tail: it unpins the segments and returns
// the reply to its pool.
func (r *pollReply) Release() {
	r.rr.Release()
	clear(r.mids)
	r.mids = r.mids[:0]
	r.head = r.head[:0]
	r.post = r.post[:0]
	if cap(r.rec) > maxRetainedRecordBuf {
		r.rec = nil
	}
	if cap(r.head) > maxRetainedRecordBuf {
		r.head = nil // a decrypted reply (encrypt_poll.go)
	}
	r.n = 0
	pollReplies.Put(r)
}

// readRecord reads the whole stored record at log position pos of e into
// r.rec and returns it as a batch view.
func (r *pollReply) readRecord(e *storage.Extent, pos int64) (wire.Batch, error) {
	var hdr [wire.BatchHeaderSize]byte
	if _, err := e.ReadAt(hdr[:], pos-e.Pos); err != nil {
		return wire.Batch{}, err
	}
	l := binary.LittleEndian.Uint64(hdr[wire.BatchOffLength:])
	if l < wire.BatchHeaderSize || int64(l) > e.Pos+e.Len-pos {
		return wire.Batch{}, wire.ErrInvalidCommand
	}
	if uint64(cap(r.rec)) < l {
		r.rec = make([]byte, l)
	}
	rec := r.rec[:l]
	if _, err := e.ReadAt(rec, pos-e.Pos); err != nil {
		return wire.Batch{}, err
	}
	v, _, err := wire.ParseBatch(rec)
	return v, err
}

// readExtent reads the stored bytes of e into r.rec.
func (r *pollReply) readExtent(e *storage.Extent) ([]byte, error) {
	if int64(cap(r.rec)) < e.Len {
		r.rec = make([]byte, e.Len)
	}
	b := r.rec[:e.Len]
	if _, err := e.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read stored records: %w", err)
	}
	return b, nil
}
