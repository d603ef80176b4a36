// Package tier is the remote tier of the partition log: sealed segments
// go to an S3-compatible bucket (internal/objstore) and are read back
// from it, so local disks hold the recent data and the bucket the rest.
//
// # Upload
//
// A Manager runs one loop for the server. Every UploadInterval (or when
// poked) it takes each partition opened through it and, with at most
// UploadConcurrency partitions at a time, uploads the partition's sealed
// segments the manifest does not list yet, oldest first, one at a time:
// the segment's records are verified on local disk first
// (storage.Partition.VerifySegment; a segment with damaged records is not
// uploaded and stays local), then its index and its log are put (the log
// in parts above the part size), and each upload is verified by the
// store's answer (size and entity tag). Only then is the segment added
// to the partition's manifest, saved durably and atomically in the
// partition directory (tier.manifest), with a copy of its index kept
// beside it (remote/{start:020}.index) for remote reads.
//
// Object keys are deterministic (keys.go): a crash between an upload and
// the manifest save uploads the same keys again, so the bucket never
// holds a segment twice, and nothing local is dropped before the
// manifest listing it is on disk.
//
// # Local retention
//
// After the uploads, the oldest sealed segments that are uploaded are
// dropped from local disk while the partition's uploaded sealed data is
// larger than LocalRetention.Bytes, or older than LocalRetention.Age (the
// same rule as retention, storage.RetainPrefix). The active segment is
// always local, and so is every segment after one not uploaded yet.
//
// # Reading
//
// Partition.Read serves an offset held only in the bucket with one
// chunk: the records starting in one ChunkBytes-aligned window of the
// segment's log, found with the local index copy, fetched with a ranged
// read into the on-disk Cache, verified record by record against the
// index and the log's format before they are cached, and returned as a
// storage extent over the cached file (sendfile works as for local
// segments). A sequential reader has the next chunk prefetched. A chunk
// that fails verification is not cached and the read fails with
// ErrRemoteRead naming the object; the caller answers an error, never
// other bytes.
//
// # Retention and deletion
//
// Retention (message_expiry, max_topic_size) and DELETE_SEGMENTS apply to
// both tiers as one log, oldest first. The manifest stops listing a
// removed segment and queues its objects for deletion in the same save;
// the loop deletes them and then forgets them, retrying on failure, so a
// deletion never blocks the request that caused it. A purge moves the
// manifest to a new epoch (offsets restart at 0, and keys carry the
// epoch). A deleted partition or topic queues its key prefix in the
// manager's delete.queue file, worked through the same way.
//
// # Cluster
//
// In cluster mode a partition's remote tier is tied to its raft group
// through Cluster: only the group's leader uploads, and it publishes each
// upload as a record in the group's log instead of listing it itself;
// every replica applies the record to its own manifest (ApplyRecord),
// drops local copies by the same rule, compacting the group's log first
// (Cluster.DropOldest), and serves reads of the bucket. Snapshots carry
// the manifest (Snapshot, Restore), so a replica that catches up copies
// only what the leader still holds locally. The manifest may then list
// segments that overlap (another replica cut its segments elsewhere): a
// read takes the first one holding the offset. A purge's epoch is the
// purge entry's index, the same on every replica.
//
// # Failures
//
// A pass that fails (store down, slow, refusing) leaves local data as it
// is and retries the partition after a backoff from one second doubling
// to a minute; it logs one WARN a minute at most, and Stats counts every
// failure. While uploads cannot happen, sealed segments stay local: if
// the disk fills, appends are refused by the local log with a clear
// error (storage.ErrDiskFull), never dropped.
package tier
