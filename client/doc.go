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
// TransientNotAccepted) is retried with the identical frame, every 50 ms
// by default, for up to 30 s per request (WithTransientRetry; a login
// gets the same budget). When the connection breaks, or a request
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
// # Clusters: seeds, leader following and exactly-once retries
//
// Several seed addresses may be given, as a comma-separated list in
// Dial's addr or a connection string (iggy://u:p@10.0.0.1:8090,10.0.0.2:8090)
// or with WithServerAddresses; Dial tries them in order. After every login
// (Dial's, Login's, and the re-login of each reconnect) the client reads
// GET_CLUSTER_METADATA. When it lists more than one node and names a
// Leader with status Healthy at another address (compared without DNS:
// hosts lower-cased, localhost as 127.0.0.1, IP literals as IPs), the
// client dials the leader with the port of its transport (TCP, QUIC or
// WebSocket), logs in there with the same client id and checks again, at
// most 3 moves per login. A reply without a leader is polled every 250 ms
// for up to 5 s, then the client stays; an unreadable reply (an older
// server) leaves it where it is. A request answered 58 for 2 s re-reads
// the metadata and, if the leader moved, is sent again on the leader; 57
// is replayed on the same connection. A reconnect rotates through the
// current address, the seeds and the healthy nodes of the last metadata
// read. ClusterPolicy tunes or disables this; each move is logged at debug
// level as "following cluster leader" with from and to. A redirect keeps
// the TLS configuration: without a ServerName, the certificate must match
// the address the metadata advertises.
//
// Unlike the official SDKs, the client id and the request counter are
// kept across moves, failovers and reconnects, and a request in flight
// when a connection broke (its outcome unknown) is sent again with the
// same client id, request number and body. Servers that replicate their
// client table (Iggo in cluster mode) answer such a retry of a committed
// metadata request from the table, and a retried SendMessages from the
// partition's duplicate window, so each request is applied once even
// when the leader changed in between. The guarantee holds while the
// server still remembers the request: the client table holds a bounded
// number of clients (clients_table_max, 8192 by default; the client whose
// last commit is oldest is evicted first) with the latest reply of each,
// and a partition remembers the last 128 requests of each client; a retry
// older than that may be applied twice (or, for metadata, answered 59
// RequestAlreadyApplied). Requests abandoned by their context and
// reconnect cycles that give up end the guarantee for those requests:
// their outcome stays unknown.
//
// # Partition routing (Iggo clusters)
//
// Against an Iggo cluster (the metadata read after login lists more than
// one node) the client also reads the partition map (CLUSTER_PARTITIONS,
// see ClusterPartitions) and sends each partition request to that
// partition's leader: SendMessages and SendBatch naming a partition, or a
// key (the client applies the server's XXH32(key) % partitions rule to the
// map), PollMessages and PollMessagesBuffer naming a partition, and the
// consumer-offset commands naming a partition. Producer (which always
// names the partition it chose) and Consumer (single or group member) use
// it without options. Everything else stays on the main connection to the
// metadata leader: metadata operations, logins, consumer-group
// membership (join, sync, leave), balanced sends (the server picks their
// partition), and every partition request while the map does not place
// it.
//
// Each node gets one connection, dialed in the background on first use
// with the same credentials, TLS and transport, and bound to the main
// connection's session with ATTACH_SESSION instead of a login: the node
// sees the same client id and session epoch, so the partitions' duplicate
// windows and consumer-group membership see one client, requests keep the
// one counter of request numbers, and no new epoch fences the main
// connection. Requests wait for nothing: until the map is read and a
// node's connection is up, they take the main connection.
//
// The map is read on the first partition request, again when it is older
// than ClusterPolicy.PartitionMapMaxAge (30 s) and in use, and after a
// partition request was answered 58 (not the leader): that partition's
// leader is forgotten, the request is retried with the identical frame
// (on the main connection until the new map places it, and always on the
// main connection right after a node's 58, so a map that keeps naming a
// node that does not lead costs a request at most one 58 there), and the
// map is read again, at most every PartitionMapMinInterval (250 ms). A node
// connection that breaks hands its requests back with their request
// numbers and bodies; they go to the main connection, and the node is left
// alone for four times PartitionMapMinInterval. A server that serves no
// map or attachment (a single node, the reference server, an older Iggo)
// turns routing off until the next login, silently. With
// ClusterPolicy.DisableRedirect the client stays on the node it dialed for
// everything; WithPartitionRouting(false) turns routing off alone.
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
