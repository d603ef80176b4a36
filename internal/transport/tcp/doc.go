// Package tcp is the binary-protocol listener over TCP and TLS.
//
// Each connection has one reader and one writer goroutine. The reader
// reads a 256-byte header, checks the frame kind and size, reads the body
// into a pooled buffer, hands the request to the dispatcher and queues the
// answer; the writer sends queued answers in request order, as many as are
// ready in one vectored write (net.Buffers, one writev on plain TCP).
//
// Limits: frames larger than message_bus.max_message_size or smaller than a
// header end the connection (Eviction 6 InvalidRequestBodySize first when
// the header names a client); a frame must arrive completely within
// tcp.frame_read_timeout of its first byte (idle connections have no read
// deadline; the heartbeat covers them); a write that blocks longer than
// tcp.write_timeout (a client that stopped reading) closes the connection;
// connections past tcp.max_connections are closed on accept. A frame whose
// command byte is not Request (5) cannot be framed reliably and closes the
// connection without an answer (framing.md, "Refused operations").
package tcp
