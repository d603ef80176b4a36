// Package metrics is the server's Prometheus instrumentation: its own
// registry (never the client library's global default), the eight
// reference families (`http_requests_total` and the gauges streams,
// topics, partitions, segments, messages, users, clients, sampled from
// live state at scrape time), and the families the reference lacks, named
// with an `iggo_` prefix: request latency per command and transport,
// answers by status, transport bytes, connections per transport,
// per-topic message and byte counters, storage write and fsync latency,
// consumer-group lag, in cluster mode raft term, commit index and
// leadership (RaftSource), and with tiered storage on the remote tier's
// uploads, backlog, bytes per tier and read cache (TierSource).
//
// Hot path: the binary request hook (Registry.Observe, a dispatch.Observer)
// and the storage hook (StorageWrite, StorageSync) only load a
// pre-resolved series from a fixed array and add to it atomically; a
// series is created once, the first time a (command, transport) or
// (status, transport) pair is seen, so nothing is allocated per request or
// per message after warm-up. Per-topic counters live in the partition
// plane and every gauge is computed from a Source when scraped.
//
// The exposition is the classic Prometheus text format 0.0.4, served as
// `text/plain; charset=utf-8`; it has no OpenMetrics `# EOF` line (the
// reference ends with one; scrapers accept both). See
// docs/OBSERVABILITY.md for every family.
package metrics
