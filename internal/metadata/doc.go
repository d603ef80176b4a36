// Package metadata is the broker's metadata plane: streams, topics,
// partitions, consumer groups, users, personal access tokens and
// permissions, the HTTP tokens revoked by a logout (revoked.go), plus the
// session plane's client table, kept as one
// deterministic state machine behind a durable log (architecture.md,
// "Metadata plane").
//
// # Log, apply, snapshot
//
// Every committed operation is an Entry: its position (op), the server
// timestamp, the client, session and request of the request it came from,
// the acting user, the command code and body, and whatever the server
// chose for it (a password hash, a token hash). Submit appends the entry as
// a checksummed record to the journal, fsyncs it, then applies it; the
// reply is sent only after that, so an acknowledged operation survives a
// crash. apply reads nothing but the entry and the state: no clock, no
// randomness, no I/O, so replaying the journal (or a future replica)
// reaches the same state and the same replies.
//
// Every SnapshotEvery entries (and at a graceful close) the whole state is
// written to a snapshot file and a new journal file is started. Start-up
// loads the newest snapshot whose checksum holds and replays the journal
// entries after it. A torn record at the end of the last journal file (a
// crash during a write) is cut off; a bad record anywhere else stops
// start-up with a message naming the file and offset.
//
// # Effects on the partition plane
//
// Creating, deleting and purging topics and partitions, deleting segments
// and deleting groups touch message storage through catalog.Data. Effects
// run after apply, in op order, under the writer lock. Each entry records
// the op through which effects had completed when it was written
// (EffectsThrough), and a purge or segment deletion is followed by a marker
// entry, so a restart re-runs the effects of the last entry only when they
// may not have happened, and never re-runs a purge whose completion was
// recorded. Startup then opens every partition of the recovered state
// (CreatePartitions is idempotent).
//
// # Consumer groups
//
// Membership, ownership, pending revocations and generations are part of
// the state (JOIN, LEAVE, Logout, DropMembers, partition changes and
// KindCompleteRevocations entries); the in-flight marks of the
// cooperative hand-off are node-local and never read by apply. A JOIN
// defers every move and the partitions without in-flight data are
// completed by a second entry before the JOIN is answered; a settling
// commit (GroupCommitted) and the rebalancing timeout (RunRevocations)
// log completions the same way. See groups.go.
//
// Membership lifetime: memberships end on LEAVE, Logout (explicit, on
// disconnect, or after a stale-client eviction) and with their group,
// topic or stream. They do not survive a restart: sessions do (the client
// table is in the snapshot), connections do not, so Open commits a
// KindDropMembers entry when members exist. Clients log in again and their
// empty SYNC makes the SDK join again (semantics.md §6.1).
//
// # Concurrency
//
// Writers serialize on Store.wmu (journal append, fsync, apply, effects);
// the state itself is guarded by Store.mu, which writers hold only while
// applying and readers take for reading. The groups' in-flight marks are
// written under Store.mu for reading plus Store.groupMu (a leaf lock). Calls into catalog.Data are made
// without Store.mu held, so the partition plane may call ResolveTopic from
// inside its own locks.
package metadata
