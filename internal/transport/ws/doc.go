// Package ws is the binary-protocol listener over WebSocket, and over
// WebSocket on TLS (WSS) on the same port when TLS is configured
// (../shared/protocol/transports.md §4, §5).
//
// The upgrade is plain RFC 6455 over HTTP/1.1 on any path and Host, with
// no Origin check, no subprotocol and no extensions (no permessage-deflate,
// as the reference). The upgrade, and the TLS handshake before it on WSS,
// must finish within HandshakeTimeout. A failed upgrade gets the library's
// HTTP error answer and the TCP connection is closed (keep-alives are off).
//
// Each binary message carries exactly one request frame: 256 <= size <=
// the frame limit and size equal to the message length. One goroutine per
// connection reads a message, hands the request to the same dispatcher as
// TCP (sessions, deduplication and permissions are shared), writes the
// answer as one binary message and reads the next. The answer is one
// unfragmented WebSocket frame up to MaxFrameSize (16 MiB by default);
// larger answers go out as continuation frames of at most that size
// (transports.md allows it; the reference SDK reassembles them).
//
// Bad input closes the connection, as the reference does: a text message
// (close status 1003 UnsupportedData), a message that is not exactly one
// frame (half a frame, two frames, a size outside the limits: 1008
// PolicyViolation; the reference's status is UNKNOWN, transports.md §11),
// a message over the read limit, or a header naming a larger size (1009
// MessageTooBig). Fragmented messages are reassembled by the library and are
// valid. A message must arrive completely within FrameReadTimeout of its
// first frame; an idle connection has no read deadline and the server
// sends no pings (the reference SDK reads only while awaiting a reply). A
// reply write that blocks longer than WriteTimeout (a client that stopped
// reading) closes the connection. Pings are answered by the library while
// the connection waits for its next message.
//
// An eviction from outside the request path (StaleClient) is sent at once
// as its own message and the connection is then closed, as on TCP (the
// reference leaves the socket open). A server-initiated close sends a Close frame with an empty payload
// and waits at most CloseGrace for the client's Close.
package ws
