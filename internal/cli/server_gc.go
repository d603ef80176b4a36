package cli

import "runtime/debug"

// serverGCPercent is the garbage collector's growth target the server
// runs with when GOGC is not set: the heap may grow to five times what
// is live before a collection, not twice (Go's default, 100). A broker's
// live heap is small (tens of MB: metadata, indexes, connection
// buffers) while every batch it takes passes through memory once, so
// with the default a node collected several times a second under load;
// each collection costs CPU on every node of a cluster and returns
// memory that the next batches fault in again. GOGC in the environment
// (including GOGC=off) wins, as with any Go program; GOMEMLIMIT bounds
// the heap when memory is tight.
const serverGCPercent = 400

// tuneGC applies serverGCPercent unless environ sets GOGC.
func tuneGC(environ []string) {
	if lookup(environ, "GOGC") != "" {
		return
	}
	debug.SetGCPercent(serverGCPercent)
}
