// Package partition is the partition plane of the broker: it owns the
// message logs of every partition (internal/storage), serves
// SEND_MESSAGES, POLL_MESSAGES and the consumer-offset commands, runs
// retention, and implements catalog.Data for the metadata plane.
//
// # Layout
//
// Partition data lives under {system.path}/streams:
//
//	{stream}/topics/{topic}-{incarnation}/partitions/{partition}/
//
// The topic incarnation (catalog.TopicRef.Incarnation, unique for every
// topic ever created) is part of the directory name, so a topic created
// again under a recycled stream or topic id never sees the files of the
// deleted one (../shared/design/storage.md §1).
//
// # Orphan sweep
//
// A deletion removes its directories only after the metadata commit, so a
// crash in between leaves directories no topic owns (harmless, because a
// new topic gets a new incarnation, but wasted space). Plane.SweepOrphans
// removes them; the broker calls it once at start-up, right after the
// metadata plane replayed its log (so every live topic incarnation and
// partition has been announced through CreatePartitions) and before
// serving. It only removes topic directories of unknown incarnations and
// partition directories of unknown ids, whose names match the layout
// exactly; anything else is logged and left alone. A partition that failed
// to open stays live for the sweep.
//
// # Requests
//
// SEND_MESSAGES (op 160): the metadata is decoded, the topic resolved
// through catalog.Topics, send permission checked, the partition picked
// (Balanced: an in-memory per-topic round robin; PartitionId; MessagesKey:
// XXH32(key) % partitions), the batch validated in place in the receive
// buffer (wire.SendMessages.Admit), the 128-id duplicate window consulted,
// and the received bytes appended once; the storage Format stamps
// partition_id, base_offset and base_timestamp and recomputes the batch
// checksum under the partition's append lock. The reply is one
// confirmation (commands.md §101). With enforce_fsync the reply waits for
// the group-committed fdatasync.
//
// POLL_MESSAGES (code 100): the start offset is derived from the strategy,
// storage.Partition.Read returns the stored records as file extents, and
// the reply is the 16-byte head, then the records as stored: whole records
// go out as file extents (sendfile on plain TCP, see dispatch.Tail), and a
// record is only re-headed (wire.Batch.AppendSliceHeader) when the poll
// starts or ends inside it.
//
// Stored records are not re-verified on the read path (whole records go
// out with sendfile, never touching user space): every record was verified
// at admission, recovery verifies the active segment record by record and
// the tail of each sealed one, and clients pass checksums through. This is
// a deliberate departure from system.partition.validate_checksum, which
// Iggo does not implement.
//
// GET/STORE/DELETE_CONSUMER_OFFSET (120/121/122) use the partition's
// storage.Offsets.
//
// # Encryption at rest
//
// With Options.Cipher (system.encryption), SEND_MESSAGES seals each
// admitted batch once before the append (payloads and non-empty user
// headers, AES-256-GCM; stored checksums cover the ciphertext), and
// POLL_MESSAGES is the single decrypt point: an encrypted partition's
// records are read into memory and decrypted into the reply, so the
// sendfile path is not used for it. A marker file in each partition
// directory records the key fingerprint; a partition whose records do not
// match the configured key (or encryption disabled) is stopped and
// Plane.KeyError makes the broker refuse to start. See encrypt.go and
// docs/ENCRYPTION.md.
//
// # Writes: one commit seam
//
// Every write of a partition goes through its commit.Committer
// (internal/partition/commit): the handlers resolve the target, validate
// the request (one validation per command: fitsRecord for a batch, the
// offset checks as commit.Write.Check), seal an encrypted batch once
// (encrypt_send.go), hand the Write to the partition's committer and
// encode the one reply from the commit.Outcome. What differs between a
// single node and a cluster member is the mode (mode.go): it makes each
// partition's committer when the partition opens and forgets it when the
// partition goes, and the plane never asks which mode it runs in.
//
//   - Single node: localCommitter (local.go) appends to storage under the
//     partition's duplicate window (commit.Window), applies offset writes
//     with commit.ApplyOffset, and purges, deletes group offsets and
//     removes segments at once.
//   - Cluster mode (Options.Replicator set): every partition is one raft
//     group, and its committer is its replicated.Replica
//     (internal/partition/replicated), which is also the group's state
//     machine. Writes are accepted by the group's leader only (58
//     elsewhere); purges and group-offset deletions become log entries
//     applied at one position on every replica. The package comment of
//     internal/partition/replicated describes it.
//
// Waits of a write are bounded by the request's connection
// (session.Conn.Context) and end when the host stops; background work
// (the NoAck and auto-commit proposals of a cluster) is joined by Close.
//
// # Error choices
//
// Where the specification leaves a choice, this package answers:
//
//   - SEND_MESSAGES, STORE_CONSUMER_OFFSET and DELETE_CONSUMER_OFFSET
//     naming an unknown stream, topic or partition, or a topic without
//     partitions: status 20 (ResourceNotFound), as the reference answers
//     every resolution failure on the partition-write path (semantics.md
//     §4.1 also allowed 3007; Iggo answers exactly as the reference).
//   - GET_CONSUMER_OFFSET for an unknown stream, topic or group: status 0
//     with an empty body ("no offset"), as the reference; an unknown
//     partition of an existing topic: 3007. POLL_MESSAGES keeps
//     1009/2010/3007.
//   - Request bodies are decoded as a prefix: bytes after the last field
//     of POLL_MESSAGES and the consumer-offset commands are ignored;
//     SEND_MESSAGES stays exact (metadata_length, batch_length).
//   - A partition with damaged records (they fail verification) opens
//     with them quarantined: polls skip the damaged offsets, as offsets
//     removed by retention (a poll starting before them stops before
//     them, one starting at or inside them gets the records after them);
//     they are logged once, at open (damage.go) or by the scrubber.
//   - A partition whose damage cannot be located (storage.CorruptError) is
//     stopped: writes to it get 4010 (CannotAppendMessage), polls and
//     offset reads 4011 (CannotReadMessage). Other partitions are served.
//   - POLL_MESSAGES with an unknown consumer group: status 5000
//     (ConsumerGroupIdNotFound). A member that does not own the requested
//     partition, or owns it but it is pending revocation (5006/5009 from
//     catalog.Topics.GroupPartition), gets the empty poll head with
//     partition_id 0xFFFFFFFF, so the SDK re-syncs. A group poll without
//     a partition id gets the plain empty head (semantics.md §4.2: the
//     server does not pick a partition for a member); a group offset
//     store or delete without one gets 20.
//
// # Consumer groups
//
// After reading a non-empty group poll the plane reports it
// (catalog.Topics.GroupPolled: member, partition, last offset read), the
// in-flight mark of the cooperative hand-off. If a rebalance took the
// partition away while the poll was reading, the report fails and the
// read is dropped in favour of the RESYNC head, so a member never receives
// messages of a partition it no longer owns. Auto-commit and a group
// offset store are reported with catalog.Topics.GroupCommitted (the
// stored offset); the metadata plane completes a pending revocation the
// commit settles before the call returns, i.e. before the reply. Offset
// stores and deletes only need ownership (a pending revocation may still
// be committed, semantics.md §5). A delete is not reported: it does not
// commit anything, and the revocation then waits for a commit or the
// rebalancing timeout.
//   - A recognized duplicate send (same client, request number and batch)
//     gets a success with zero confirmations ([0 u32]): the upstream page
//     says "empty success, including no offset confirmations", and the
//     SDK decoders reject an entirely empty SendMessages body.
package partition
