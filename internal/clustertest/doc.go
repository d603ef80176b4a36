// Package clustertest holds the fault tests of cluster mode with real
// (Unix only: they drive the nodes with signals)
// `iggo server` processes: a 3-node cluster on loopback ports is run under
// producer load while nodes are killed (SIGKILL), frozen (SIGSTOP /
// SIGCONT) and restarted, some with a wiped data directory. Every client
// operation is recorded with its invocation and completion time and its
// outcome (ok, failed, unknown), and each history is checked twice: for
// linearizability against a model of a partition log with porcupine
// (append returns the offset, read returns the whole log), and directly
// against what every node stores once caught up (every acknowledged
// message exactly once at its acknowledged offset, offsets contiguous,
// replicas identical). A follower forwards polls to the partition's
// leader, so reading "what a node stores" through a follower reads the
// leader's log; the in-process tests compare the replicas' own bytes.
//
// Besides the SIGKILL, SIGSTOP, wiped-directory and randomized-schedule
// tests, TestPartitionedLeader cuts the leader off in a network namespace
// (it needs root and iproute2, and says so when skipped), and
// TestRetriedSendsAcrossFailover checks the exactly-once path: requests of
// unknown outcome retried with the same client id and request number on
// the next leader are stored once. TestClusterStartCommand runs
// `iggo cluster start` and `iggo cluster status` as a user would.
//
// The tests build the iggo binary once (TestMain) and are part of
// `go test ./...`; they stay bounded (well under three minutes together).
// IGGO_CLUSTER_SCHEDULES=N runs N randomized fault schedules instead of
// one, IGGO_CLUSTER_SEED fixes the first seed, IGGO_CLUSTER_FAILOVERS=N
// kills the leader N times in TestLeaderKillUnderLoad (a distribution of
// failover times), and IGGO_TEST_LOG=1 copies the node logs of a test to
// its output (the last lines of each are copied when a test fails);
// IGGO_TEST_LOG_LEVEL sets the nodes' log level (default info; debug adds
// raft's role and term changes).
package clustertest
