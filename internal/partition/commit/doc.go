// Package commit is the commit seam of the partition plane: the one way a
// partition's writes become durable and visible, whichever mode the broker
// runs in.
//
// A Committer commits the writes of one partition: an admitted (and, when
// the partition is encrypted, sealed) batch, a consumer-offset store,
// advance or delete, a purge, the removal of old segments. The plane
// (internal/partition) resolves, validates and seals a request, hands the
// Write to its partition's Committer and encodes the answer from the
// Outcome; it never asks which mode it is in. Two implementations exist:
// the local one (internal/partition, local.go: a direct append to the
// partition's storage) and the replicated one
// (internal/partition/replicated: through the partition's raft group).
//
// Both share what this package holds besides the seam: the duplicate
// window that recognises a retried request (Window, keyed by Key) and the
// rules that apply a consumer-offset write to storage (ApplyOffset). Each
// mode has one owner of duplicate detection: the local Committer, or the
// replica (which adds the requests in flight in its raft log).
package commit
