package raftlog_test

import (
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/raftlog"
)

// The Log is a replication.LogStorage (asserted here, in an external test
// package, because raftlog itself must not import replication).
var _ replication.LogStorage = (*raftlog.Log)(nil)
