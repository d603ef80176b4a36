// Package faultsuite is a Jepsen-style fault suite for Iggo clusters: it
// starts real `iggo server` processes, drives them with clients of the Go
// SDK (package client) that send messages with unique payload ids, poll
// partitions by offset, store and read consumer offsets and run consumer
// group members, records every operation in a History, injects faults
// from a seeded schedule (SIGKILL and restart, SIGSTOP/SIGCONT pauses,
// network partitions including one-way ones in network namespaces,
// membership changes, bit flips and truncation of a minority of nodes'
// files), heals the cluster, reads every partition back and checks the
// history: lost acknowledged writes, duplicates, reordered offsets,
// skipped or backward polls, stored offsets going backward, reads of
// data the final log does not hold, and a partition assigned to two group
// members at once.
//
// The suite runs from `go test ./internal/faultsuite -run TestFaultSuite`
// (a bounded profile) and by hand with -faults.profile=long; see
// docs/RELIABILITY.md. It needs a Unix system (signals); network
// partitions need root and iproute2 and are skipped, with the reason
// logged, without them.
package faultsuite
