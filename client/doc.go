// Package client is the Go SDK for servers speaking the Apache Iggy binary
// protocol 0.11.0 (Iggo and the reference server), over TCP or TLS, and
// over QUIC or WebSocket with the opt-in subpackages client/quic and
// client/ws (WithTransport).
//
// # Connecting
//
//	c, err := client.Dial(ctx, "127.0.0.1:8090", client.WithCredentials("iggy", "iggy"))
//	if err != nil { ... }
//	defer c.Close()
//
// Dial logs in when credentials are given (WithCredentials or WithToken);
// otherwise call Login or LoginWithToken. Every command of the protocol
// has a typed method (CreateStream, GetTopic, SendMessages, PollMessages,
// JoinConsumerGroup, ...). Arguments use the wire types
// (wire.NumericID(1), wire.NamedID("orders"), wire.SingleConsumer(...))
// and results are the wire reply types.
//
// # Errors
//
// A server status or result code is returned as the matching wire
// sentinel, wrapped in a *CommandError naming the command:
// errors.Is(err, wire.ErrStreamNameAlreadyExists). An eviction is a
// *wire.EvictionError (errors.Is matches the code the official SDKs map
// its reason to, e.g. wire.ErrInvalidCredentials for reason 9). A reply
// that breaks the protocol is a *ProtocolError (matches
// wire.ErrInvalidCommand); a connection that could not be restored is a
// *ConnError (matches wire.ErrDisconnected); calls after Close return
// ErrClosed.
//
// "Not found" reads: the server answers GET_STREAM, GET_TOPIC, GET_USER,
// GET_CLIENT, GET_CONSUMER_GROUP and SYNC_CONSUMER_GROUP with an empty body
// when the object does not exist; the client returns a sentinel, as the
// official SDKs do: wire.ErrStreamIDNotFound, wire.ErrTopicIDNotFound,
// wire.ErrResourceNotFound (the code the server uses for users),
// wire.ErrClientNotFound, wire.ErrConsumerGroupIDNotFound and
// wire.ErrConsumerGroupMemberNotFound. The one exception is
// GetConsumerOffset, which returns (nil, nil) when no offset is stored:
// having none yet is the normal state of a new consumer.
//
// # Requests, retries and reconnects
//
// Requests follow upstream-framing.md: the client id is random (or
// WithClientID) and kept for the Client's life; one request counter,
// starting at 1, is advanced by metadata operations, partition operations
// (SendMessages, Store/DeleteConsumerOffset), Logout and DeleteSegments,
// while reads reuse its current value and Register uses 0;
// request_checksum (XXH3-64 of the body, widened to 128 bits) is stamped
// on session and metadata operations and DeleteSegments.
//
// Requests from many goroutines are pipelined on one connection and
// matched to replies in order (WithLockstep sends one at a time instead).
// Metadata operations are serialized, one in flight at a time.
//
// A transient rejection (57 TransientNotCommitted, 58
// TransientNotAccepted) is retried with the identical frame with bounded
// backoff (WithTransientRetry). When the connection breaks, or a request
// waits longer than the response timeout, the client reconnects with
// backoff (WithReconnect), logs in again under the same client id (the
// server mints a higher session epoch) and resends the requests that were
// in flight, in their original order, with their original request numbers
// and bodies, so the server's deduplication (the metadata client table and
// the partitions' 128-request windows) executes each once: a SendMessages
// retried this way is stored once, and its reply then carries no
// confirmation. An eviction fails the requests in flight with the
// *wire.EvictionError; the next call reconnects and logs in again, except
// after a refused login (bad credentials or token, inactive user,
// incompatible protocol), which is final.
//
// A context ending before the reply abandons the request: if it was not
// written yet it never will be; if it was, its outcome is unknown and its
// reply is discarded.
//
// # Producing and consuming
//
// SendMessages encodes its messages into the request on every call;
// SendBatch sends a batch encoded beforehand (wire.BatchBuilder,
// wire.AppendBatch) with one copy and no per-message work, for callers
// that send the same or pre-built batches (benchmarks, replay).
// Producer batches messages per partition by count, bytes and linger
// time, resolves partitions client-side (fixed, custom, XXH32(key) %
// partitions, or balanced), sends in the background within a byte budget
// and reports deliveries; Flush and Close wait for them. Consumer polls a
// topic as a single consumer or as a consumer-group member (join, sync,
// round robin over the assigned partitions, re-sync when fenced), stores
// offsets per its commit mode, and offers an iterator (Messages) and a
// one-poll API (Poll). See examples/ for complete programs.
package client
