// Package session is the session plane of the broker: per-connection
// state (Conn) and its registry (Manager), login-register and logout
// (semantics.md §1.3-§1.9), heartbeat tracking and stale-client eviction
// (§1.10), the metadata-plane client table (§1.5, ClientTable) and the
// partition-plane duplicate window (upstream-framing.md, PartitionWindow).
//
// The client table is a deterministic state machine fed only by committed
// log entries (Entry: Register, Logout) and committed metadata replies, so
// the metadata log can replay and snapshot it. Log is that seam; MemLog is
// the in-memory implementation used until the metadata log exists.
package session
