package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// groupOffsetView is one partition of a group's position in `group get`:
// the committed offset (the last message the group handled), the
// partition's end offset (its current, newest offset) and the lag between
// them.
type groupOffsetView struct {
	Partition uint32  `json:"partition"`
	Member    *uint32 `json:"member"`
	Committed *uint64 `json:"committed_offset"`
	End       *uint64 `json:"end_offset"`
	Lag       uint64  `json:"lag"`
}

// groupLag reads the group's committed offset on every partition of the
// topic (GET_CONSUMER_OFFSET with the group as consumer; members are not
// needed to read) and the partitions' end offsets (GET_TOPIC), and returns
// one view per partition and the total lag. Lag is end - committed, or
// every retained message when the group has committed nothing there.
func (a *app) groupLag(cmd *cobra.Command, c *client.Client, sid, tid, gid wire.Identifier, members []wire.ConsumerGroupMember) ([]groupOffsetView, uint64, error) {
	t, err := a.getTopic(cmd, c, sid, tid)
	if err != nil {
		return nil, 0, err
	}
	owner := map[uint32]uint32{}
	for _, m := range members {
		for _, p := range m.Partitions {
			owner[p] = m.ID
		}
	}
	views := make([]groupOffsetView, 0, len(t.Partitions))
	var total uint64
	for _, p := range t.Partitions {
		v := groupOffsetView{Partition: p.ID}
		if id, ok := owner[p.ID]; ok {
			v.Member = &id
		}
		var off *wire.ConsumerOffset
		if err := a.call(cmd, func(ctx context.Context) (err error) {
			off, err = c.GetConsumerOffset(ctx, wire.GroupConsumer(gid), sid, tid, wire.SomePartition(p.ID))
			return err
		}); err != nil {
			return nil, 0, wrapf(err, "get offset of group %s on %s/%s partition %d", gid, sid, tid, p.ID)
		}
		if p.MessagesCount > 0 {
			end := p.CurrentOffset
			v.End = &end
			v.Lag = p.MessagesCount
		}
		if off != nil {
			stored := off.StoredOffset
			v.Committed = &stored
			v.Lag = 0
			if v.End != nil && *v.End > stored {
				v.Lag = *v.End - stored
			}
		}
		total += v.Lag
		views = append(views, v)
	}
	return views, total, nil
}

// groupLagTable writes the PARTITION MEMBER COMMITTED END LAG table.
func groupLagTable(tw *tabwriter.Writer, views []groupOffsetView) {
	row(tw, "PARTITION", "MEMBER", "COMMITTED", "END", "LAG")
	for _, v := range views {
		row(tw, v.Partition, optU32(v.Member), optU64(v.Committed), optU64(v.End), v.Lag)
	}
}

func optU32(v *uint32) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func optU64(v *uint64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
