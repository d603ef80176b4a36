// Package transport is the replica plane: one authenticated TCP (optionally
// TLS 1.3) connection per pair of nodes on the replica port, carrying
// batches of raft messages tagged with their group.
//
// Connection roles are fixed by replica id: the lower id dials, the higher
// id accepts, so a pair never holds two connections. A new connection
// begins with a handshake (Hello, Challenge, Finish, Welcome) that checks
// the cluster id (BLAKE3 of the cluster name), both replica ids, and an
// HMAC-SHA256 over both nonces keyed with the shared secret in each
// direction, so each side proves it knows the secret. Any mismatch is
// answered with a Reject frame naming the reason, logged on both sides,
// and the connection is closed before a single raft message is read.
//
// After the handshake both sides send frames:
//
//	u32 LE body length | u32 LE CRC-32C of body | body
//	body = u8 frame type | payload
//
// A batch frame holds every envelope queued for that peer at the time of
// the flush (one write per flush). Besides raft messages an envelope may
// carry opaque bytes (Kind.CarriesData): the requests and replies of
// calls between hosts and leadership announcements; the transport only
// carries them, and reports one through Handler.Unreachable only when it
// was certainly never written (ConnHandler.Disconnected announces the
// loss of a connection and whatever was in flight on it). Each peer has a bounded queue; a full
// queue, a missing connection or an oversized message drops the
// envelopes and reports them through Handler.Unreachable so raft can
// mark the peer unreachable and retry, as raft expects of a lossy
// transport. A frame with a bad length, checksum or encoding closes the
// connection with a log line; the dialer reconnects with backoff.
package transport
