// Package fileio is the seam through which the logs' durable writes reach
// the operating system: the write, pwrite, fdatasync/fsync, ftruncate and
// fallocate calls of the partition log (internal/storage), the raft log
// (internal/replication/raftlog) and the metadata journal
// (internal/metadata) go through an [IO], so that tests can make a disk
// fail.
//
// Production code uses the operating system directly ([OS], or a
// package's own variant with its platform data sync); an IO is a small
// interface over *os.File, so the production path allocates nothing and
// costs one indirect call per system call.
//
// [Faults] wraps an IO and injects errors by rule: the N-th matching call,
// every call on a path pattern, a short write followed by an error (what
// a file system out of space does), for a number of calls or until
// cleared. Tests use it to check that a log refuses, cuts back and
// reports exactly what the error semantics of docs/OPERATIONS.md
// ("Disk errors") promise.
package fileio
