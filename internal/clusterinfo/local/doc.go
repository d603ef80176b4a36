// Package local lays out and runs a cluster of `iggo server` processes on
// the loopback interface: one TOML configuration and one data directory per
// node under a root directory, the node processes themselves (started,
// signalled and stopped by PID), and a small error-returning wire
// connection for probing them (PING, login, GET_CLUSTER_METADATA) and
// driving them (metadata commands, SEND_MESSAGES, POLL_MESSAGES).
//
// `iggo cluster start` and the real-process fault tests of
// internal/clustertest are built on it.
package local
