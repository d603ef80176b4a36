package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// partitionTiers asks the server how the topic's partitions are split
// between local disk and the remote tier (PARTITION_TIERS). It returns
// nil when tiered storage is off, when the server does not know the
// command (an older server) or when the request fails: `topic get` then
// shows the topic without them, with a note on stderr for a failure.
func (a *app) partitionTiers(cmd *cobra.Command, c *client.Client, sid, tid wire.Identifier) []wire.PartitionTiers {
	var ts []wire.PartitionTiers
	err := a.call(cmd, func(ctx context.Context) (err error) { ts, err = c.PartitionTiers(ctx, sid, tid); return err })
	switch {
	case err == nil:
		return ts
	case errors.Is(err, wire.ErrInvalidCommand):
		// A server without PARTITION_TIERS: nothing to show.
	default:
		fmt.Fprintf(cmd.ErrOrStderr(), "note: local and remote bytes of the partitions not shown: %v\n", err)
	}
	return nil
}

// withTierViews sets the tier fields of the partitions ts lists.
func withTierViews(vs []partitionView, ts []wire.PartitionTiers) {
	byID := make(map[uint32]*wire.PartitionTiers, len(ts))
	for i := range ts {
		byID[ts[i].PartitionID] = &ts[i]
	}
	for i := range vs {
		t, ok := byID[vs[i].ID]
		if !ok {
			continue
		}
		local, remote, remoteOnly, pending := t.LocalBytes, t.RemoteBytes, t.RemoteOnlyBytes, t.PendingBytes
		remoteSegs, pendingSegs := t.RemoteSegments, t.PendingSegments
		v := &vs[i]
		v.LocalSizeBytes, v.RemoteSizeBytes, v.RemoteOnlySizeBytes, v.PendingSizeBytes = &local, &remote, &remoteOnly, &pending
		v.RemoteSegmentsCount, v.PendingSegmentsCount = &remoteSegs, &pendingSegs
	}
}

// tiersTable writes one row per partition: its bytes on local disk, in
// the bucket, only in the bucket and not uploaded yet.
func tiersTable(tw *tabwriter.Writer, ts []wire.PartitionTiers) {
	row(tw, "PARTITION", "LOCAL", "REMOTE", "REMOTE ONLY", "PENDING", "REMOTE SEGMENTS", "PENDING SEGMENTS")
	for _, t := range ts {
		row(tw, t.PartitionID, fmtSize(t.LocalBytes), fmtSize(t.RemoteBytes), fmtSize(t.RemoteOnlyBytes), fmtSize(t.PendingBytes),
			t.RemoteSegments, t.PendingSegments)
	}
}
