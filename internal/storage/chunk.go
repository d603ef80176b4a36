package storage

import "os"

// Chunk is a local file holding a run of a segment log's bytes kept
// outside the partition's own files, such as a piece of a segment of the
// remote tier cached on local disk (internal/tier). The log byte at
// position pos is at offset pos - Base() of File.
type Chunk interface {
	// File is the chunk file; it is read with ReadAt and sendfile only.
	File() *os.File
	// Base is the log position of the file's first byte.
	Base() int64
	// Name names the bytes in errors (the remote object, for instance).
	Name() string
	// Release drops the pin the extent holds.
	Release()
}

// ChunkExtent returns an extent whose bytes are in c: the records at log
// positions pos .. pos+n, the first with base offset first, the last at
// lastPos with base offset last, ending at offset end. The extent takes
// over one pin of c, which ReadResult.Release releases; the caller makes
// sure the bytes are whole, verified records.
func ChunkExtent(c Chunk, pos, n int64, first uint64, lastPos int64, last, end uint64) Extent {
	return Extent{chunk: c, Pos: pos, Len: n, FirstOffset: first, LastPos: lastPos, LastOffset: last, EndOffset: end}
}
