package client

import "sync"

// maxKeptFrames bounds the SendBatch frame buffers a Client keeps for
// reuse; maxKeptFrameBytes bounds the size of one kept buffer.
const (
	maxKeptFrames     = 4
	maxKeptFrameBytes = 64 << 20
)

// framePool keeps the frame buffers of completed SendBatch calls, so the
// next call copies its batch into memory that is already mapped instead of
// allocating (zeroing, faulting in and later collecting) a new frame per
// send. A frame goes back only when its call finished without being
// abandoned: the server answered it, so it was written completely and no
// connection references it any more. An abandoned call's frame may still
// be queued or being written and is left to the garbage collector.
type framePool struct {
	mu   sync.Mutex
	free [][]byte // guarded by mu
}

// get returns an empty buffer with a capacity of at least n bytes.
func (p *framePool) get(n int) []byte {
	p.mu.Lock()
	for i, b := range p.free {
		if cap(b) >= n {
			last := len(p.free) - 1
			p.free[i] = p.free[last]
			p.free[last] = nil
			p.free = p.free[:last]
			p.mu.Unlock()
			return b[:0]
		}
	}
	p.mu.Unlock()
	return make([]byte, 0, n)
}

// put keeps b for reuse; when the pool is full, b replaces the smallest
// kept buffer if it is larger.
func (p *framePool) put(b []byte) {
	if cap(b) > maxKeptFrameBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < maxKeptFrames {
		p.free = append(p.free, b[:0])
		return
	}
	small := 0
	for i := range p.free {
		if cap(p.free[i]) < cap(p.free[small]) {
			small = i
		}
	}
	if cap(p.free[small]) < cap(b) {
		p.free[small] = b[:0]
	}
}
