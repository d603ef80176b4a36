// Package rawio runs the system calls of the write path that only copy —
// a write into the page cache, a read from or a write to a non-blocking
// socket — without telling the Go runtime that the calling goroutine may
// block.
//
// An ordinary system call made through package os or net tells the
// runtime it may block. When it lasts longer than the runtime monitor's
// tick (20 µs), the monitor gives the processor to another thread, and the
// call's return must win one back; and the first such call after the
// process was idle wakes the monitor, which then polls every 20 µs for a
// millisecond or more. A node of a local cluster runs with one processor
// (GOMAXPROCS 1) and goes idle between batches, so each 1 MB batch paid
// for a dozen monitor wake-ups and a few thread hand-offs. The calls here
// never wait for anything but the CPU: a socket is non-blocking (a full or
// empty socket returns EAGAIN and the goroutine parks in the network
// poller as usual) and a page-cache write only copies. What does wait for
// the disk, fdatasync, goes through internal/uring.
//
// The raw path exists on Linux (amd64, arm64); elsewhere every call is
// the ordinary one. TLS connections always take the ordinary path, and so
// does every call in a build with the race detector: the ordinary calls
// tell the detector that what one goroutine wrote to a socket happens
// before what another read from it, and raw ones cannot, so tests that
// order goroutines through a connection would see false races.
package rawio
