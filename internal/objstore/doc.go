// Package objstore is the client of the S3-compatible bucket that tiered
// storage keeps sealed log segments in.
//
// A [Store] addresses one bucket and one key prefix in it. It uploads an
// object from an [io.ReaderAt] (one PUT up to [Config.PartSize], a multipart
// upload with a bounded number of parts in flight above it), reads byte
// ranges back with ranged GETs, and lists and deletes objects under a
// prefix. Every upload is verified: each request carries the MD5 of its
// body, and after the upload a HEAD must report the size sent and the ETag
// computed locally from the bytes sent ([ComputeETag]); a mismatch is
// reported as [ErrVerify].
//
// Each request is bounded by [Config.Timeout]. The underlying client
// retries transient failures itself; callers add their own backoff on top.
//
// Errors carry the operation and key and wrap one of the sentinels
// [ErrNotFound], [ErrBucketMissing], [ErrAccessDenied], [ErrUnreachable],
// [ErrShortObject], [ErrVerify] or [ErrForeignOwner] when they apply, so
// callers can tell a missing object from an outage with errors.Is.
// [Store.Check] and [Claim] are meant for server start: their errors are one
// line naming the tiered_storage configuration key to fix.
package objstore
