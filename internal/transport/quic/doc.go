// Package quic is the binary-protocol listener over QUIC
// (../shared/protocol/transports.md §3): one request per client-opened
// bidirectional stream, answered on the same stream, then FIN.
//
// Each connection has one goroutine that accepts streams one at a time,
// as the reference does. For a stream it reads exactly the frame the
// header's size names (it does not wait for the client's FIN), drops the
// rest of the receive side (STOP_SENDING 0), hands the request to the same
// dispatcher as TCP (sessions, deduplication and permissions are shared),
// writes the one answer and finishes the stream. A session belongs to the
// connection, not to a stream; losing the connection commits its Logout.
//
// TLS 1.3 always, no ALPN (the reference SDK offers none), no client
// certificates, no 0-RTT (the listener is not an early listener, so early
// data is refused by the TLS layer and the client falls back to 1-RTT; the
// reference's close code 0x1004 is therefore never needed), no datagrams,
// no unidirectional streams (opening one is a stream-limit error).
//
// Bad input (transports.md §3, §9):
//
//   - a stream whose frame cannot be read (size outside 256..=max, a FIN
//     or reset before the frame is complete, or a command byte other than
//     Request) is dropped without an answer: STOP_SENDING and a FIN with
//     no data. The connection stays. For a non-Request command byte the
//     reference leaves the stream waiting until a 60 s backstop closes the
//     connection; Iggo drops the stream at once (UNKNOWN in the reference
//     whether anything depends on the wait).
//   - a frame must arrive within FrameReadTimeout of the stream being
//     accepted (the reference waits without bound; Iggo bounds it), else
//     the stream is dropped the same way.
//   - a reply write that blocks longer than WriteTimeout (a client that
//     stopped reading) resets the stream and closes the connection.
//   - an eviction raised while no stream is being served (StaleClient)
//     waits and becomes the answer on the client's next stream; that
//     request is not executed. Evictions never close the connection.
//
// Close codes: 0x1003 "shutdown" when the server ends a connection
// (shutdown, connection limit, stuck writer).
package quic
