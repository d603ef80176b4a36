package raftlog

import (
	"log/slog"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// Defaults for Options fields left zero.
const (
	DefaultSegmentBytes = 64 << 20
	DefaultCacheBytes   = 8 << 20
)

// Options configures a Log.
type Options struct {
	// Sync makes Append fsync the entry files it wrote (and the
	// directory, when it created a file) before returning: raft's
	// contract that appended entries are durable before the messages of
	// the same Ready are sent. With Sync false entries are only written
	// with write(2): a crash of the process loses nothing (the data is in
	// the page cache), but a crash of the machine can lose any suffix of
	// the entries appended since the last fsync, which breaks raft's
	// guarantees if the lost entries were acknowledged to a leader.
	Sync bool
	// SegmentBytes is the size at which the entry file being written is
	// closed and a new one started (a file exceeds it by at most one
	// record). Zero means DefaultSegmentBytes.
	SegmentBytes int64
	// CacheBytes bounds the memory of the cache of most recent entries
	// that Entries serves without reading the files (each entry is
	// charged its encoded size plus a fixed overhead). Zero means
	// DefaultCacheBytes; a negative value disables the cache.
	CacheBytes int64
	// Logger receives recovery warnings. Nil means slog.Default().
	Logger *slog.Logger
	// FileIO performs the writes, fsyncs and cuts of entry, state and
	// snapshot files; nil is the operating system. Tests inject disk
	// errors through it (fileio.Faults). Open's recovery uses the OS.
	FileIO fileio.IO
}

// cacheEntryOverhead is what a cached entry costs beyond its encoded size
// (the Entry struct, its pointer fields and the cache slots).
const cacheEntryOverhead = 96

func (o Options) withDefaults() Options {
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.CacheBytes < 0 {
		o.CacheBytes = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FileIO == nil {
		o.FileIO = fileio.OS{}
	}
	return o
}
