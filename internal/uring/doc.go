// Package uring syncs files through Linux io_uring, so that a goroutine
// waiting for its disk parks in the runtime's network poller instead of
// holding a thread in a blocking system call.
//
// A blocking fdatasync(2) made the ordinary way keeps its thread and
// processor in a system call for the length of the disk write. When that
// lasts longer than the runtime monitor's tick, the monitor hands the
// processor to another thread and then polls every 20 µs for the next
// millisecond. A broker that syncs every 1 MiB written (the flusher of
// every partition) so paid a handful of thread switches and monitor
// wake-ups per megabyte. Here the sync is queued on a ring
// (IORING_OP_FSYNC with IORING_FSYNC_DATASYNC, punted to the kernel's
// io_uring workers), and its completion is signalled on an eventfd that
// the caller reads through the network poller: no system call of the
// caller's blocks.
//
// Rings are kept in a process-wide pool, like the runtime's own poller:
// at most MaxRings, each used by one sync at a time, created when first
// needed and kept for the life of the process. Where io_uring is missing
// or refused (not Linux, an old kernel, a seccomp filter, the
// kernel.io_uring_disabled setting), Fdatasync returns an error wrapping
// errors.ErrUnsupported once and for all, and the caller syncs the
// ordinary way.
package uring

// MaxRings bounds the rings of the process, and so the syncs that run at
// once through io_uring; further callers wait for a free ring.
const MaxRings = 32
