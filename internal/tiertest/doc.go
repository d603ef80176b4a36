//go:build !windows

// Package tiertest holds the end-to-end tests of tiered storage with real
// processes: an `iggo server` built from cmd/iggo (TestMain builds it
// once) uploading sealed segments to a real S3 server (versitygw, started
// through internal/objstore/objstoretest), driven through the Go SDK
// (package client) over TCP. The tests look at what the server keeps on
// disk (the partition directory: segment files and the tier.manifest)
// and at what the bucket holds (listed through internal/objstore), never
// at the server's internals.
//
// TestTieredTwoGigabytes round-trips 2 GB through a partition that keeps
// 200 MiB locally; TestTieredKillDuringUploads kills the server with
// SIGKILL while segments are being uploaded; TestTieredStoreOutage stops
// the object store for a minute under load; TestTieredExpiry checks that
// retention removes objects from the bucket; TestTieredPurgeAndDeletions
// purges while uploads are in flight, deletes segments and the topic;
// TestTieredReadAtTheBoundary polls the oldest local offset while
// segments are dropped; TestTieredDamagedObjects damages objects and
// index copies; TestTieredLocalRetentionOption updates the topic's
// local_retention_size. Each test prints its figures (throughput,
// catch-up time, local disk use) with t.Log.
//
// The versitygw binary is found through $IGGO_VERSITYGW, PATH or
// $(go env GOPATH)/bin (objstoretest); without it the tests skip, or fail
// when the CI environment variable is set. Servers are stopped by PID.
// IGGO_TEST_LOG=1 copies the server logs to the test output (the last
// lines are copied when a test fails).
package tiertest
