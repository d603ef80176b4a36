package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// resetFlags are the flags of `iggo group reset`.
type resetFlags struct {
	earliest  bool
	latest    bool
	timestamp string
	offset    uint64
	partition uint32
	force     bool
	dryRun    bool
}

// resetPlan is one partition of a reset: where the group will read next.
type resetPlan struct {
	Partition uint32  `json:"partition"`
	Before    *uint64 `json:"committed_before"`
	After     *uint64 `json:"committed_after"`
	Next      uint64  `json:"next_offset"`
	Done      bool    `json:"done"`
}

func (a *app) groupResetCmd() *cobra.Command {
	var f resetFlags
	cmd := &cobra.Command{
		Use:     "reset STREAM TOPIC GROUP (--to-earliest | --to-latest | --to-timestamp T | --to-offset N) [--partition N] [--force] [--dry-run]",
		Aliases: []string{"seek"},
		Short:   "Move a consumer group's committed offsets: to the earliest or latest message, a time or an offset",
		Long: `Move a consumer group's committed offsets, on every partition of the topic or
only on --partition N, so that its next poll (--next) starts at:
  --to-earliest     the oldest retained message (the stored offset is deleted)
  --to-latest       after the newest message (only new messages are read)
  --to-timestamp T  the first message stored at or after T (RFC 3339,
                    microseconds since the epoch, or a duration ago such as 1h);
                    after the newest message when there is none
  --to-offset N     offset N (the group's committed offset becomes N-1;
                    offsets before the oldest retained message mean earliest)

The server stores a group's offset only for a member owning the partition, so
the command joins the group, stores the offsets of the partitions it is
assigned and leaves. It refuses while the group has members (their polls
would commit over the reset, and they own the partitions) unless --force;
with --force the partitions other members keep are reported as not reset.
--dry-run shows the plan without changing anything.`,
		Example: `  iggo group reset orders events billing --to-earliest
  iggo group reset orders events billing --to-timestamp 2h --dry-run
  iggo group reset orders events billing --to-offset 100 --partition 2`,
		Args: exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error { return a.runGroupReset(cmd, args, &f) },
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.earliest, "to-earliest", false, "start at the oldest retained message")
	fs.BoolVar(&f.latest, "to-latest", false, "start after the newest message")
	fs.StringVar(&f.timestamp, "to-timestamp", "", "start at the first message stored at or after this time")
	fs.Uint64Var(&f.offset, "to-offset", 0, "start at this offset")
	fs.Uint32VarP(&f.partition, "partition", "p", 0, "reset only this partition (default: every partition)")
	fs.BoolVar(&f.force, "force", false, "reset even while the group has members")
	fs.BoolVar(&f.dryRun, "dry-run", false, "show the new offsets without storing them")
	return cmd
}

func (a *app) runGroupReset(cmd *cobra.Command, args []string, f *resetFlags) error {
	sid, tid, gid, err := parseGroup(args)
	if err != nil {
		return err
	}
	fl := cmd.Flags()
	var chosen []string
	for _, n := range []string{"to-earliest", "to-latest", "to-timestamp", "to-offset"} {
		if fl.Changed(n) {
			chosen = append(chosen, "--"+n)
		}
	}
	if len(chosen) != 1 {
		return usagef("choose one of --to-earliest, --to-latest, --to-timestamp and --to-offset (given: %s)", orDefault(strings.Join(chosen, ", "), "none"))
	}
	var ts uint64
	if fl.Changed("to-timestamp") {
		if ts, err = parseTimestamp(f.timestamp, time.Now()); err != nil {
			return err
		}
	}
	return a.withClient(cmd, func(c *client.Client) error {
		var g *wire.GroupDetails
		if err := a.call(cmd, func(ctx context.Context) (err error) { g, err = c.GetConsumerGroup(ctx, sid, tid, gid); return err }); err != nil {
			return wrapf(err, "get group %s of %s/%s", gid, sid, tid)
		}
		if g.MembersCount > 0 && !f.force && !f.dryRun {
			return fmt.Errorf("reset group %s of %s/%s: it has %d member(s), which own its partitions and would commit over the reset; stop them first or pass --force", gid, sid, tid, g.MembersCount)
		}
		t, err := a.getTopic(cmd, c, sid, tid)
		if err != nil {
			return err
		}
		parts := t.Partitions
		if fl.Changed("partition") {
			i := slices.IndexFunc(parts, func(p wire.PartitionInfo) bool { return p.ID == f.partition })
			if i < 0 {
				return fmt.Errorf("reset group %s of %s/%s: no partition %d (the topic has %d)", gid, sid, tid, f.partition, len(parts))
			}
			parts = parts[i : i+1]
		}
		plans := make([]resetPlan, 0, len(parts))
		for _, p := range parts {
			plan, err := a.planReset(cmd, c, sid, tid, gid, p, f, ts)
			if err != nil {
				return err
			}
			plans = append(plans, plan)
		}
		var notOwned []uint32
		if !f.dryRun {
			if notOwned, err = a.applyReset(cmd, c, sid, tid, gid, plans); err != nil {
				return err
			}
		}
		if err := a.print(cmd, plans, func(tw *tabwriter.Writer) {
			row(tw, "PARTITION", "COMMITTED BEFORE", "COMMITTED AFTER", "NEXT OFFSET", "DONE")
			for _, p := range plans {
				row(tw, p.Partition, optU64(p.Before), optU64(p.After), p.Next, yesNo(p.Done))
			}
			if f.dryRun {
				fmt.Fprintln(tw, "dry run: nothing stored")
			}
		}); err != nil {
			return err
		}
		if len(notOwned) > 0 {
			return fmt.Errorf("reset group %s of %s/%s: partitions %s are owned by other members and were not reset", gid, sid, tid, joinIDs(notOwned))
		}
		return nil
	})
}

// planReset works out a partition's new position: Next is the first
// offset the group will read, After the offset to store (nil: delete the
// stored offset, so the group starts at the oldest retained message).
func (a *app) planReset(cmd *cobra.Command, c *client.Client, sid, tid, gid wire.Identifier, p wire.PartitionInfo, f *resetFlags, ts uint64) (resetPlan, error) {
	plan := resetPlan{Partition: p.ID}
	var off *wire.ConsumerOffset
	if err := a.call(cmd, func(ctx context.Context) (err error) {
		off, err = c.GetConsumerOffset(ctx, wire.GroupConsumer(gid), sid, tid, wire.SomePartition(p.ID))
		return err
	}); err != nil {
		return plan, wrapf(err, "get offset of group %s on %s/%s partition %d", gid, sid, tid, p.ID)
	}
	if off != nil {
		before := off.StoredOffset
		plan.Before = &before
	}
	// [first, end) are the retained offsets; first == end when empty.
	end := uint64(0)
	if p.MessagesCount > 0 {
		end = p.CurrentOffset + 1
	}
	first := end - min(p.MessagesCount, end)
	fl := cmd.Flags()
	switch {
	case f.earliest:
		plan.Next = first
	case f.latest:
		plan.Next = end
	case fl.Changed("to-offset"):
		if f.offset > end {
			return plan, usagef("--to-offset %d: partition %d ends at offset %d (use --to-latest to skip everything)", f.offset, p.ID, end)
		}
		plan.Next = max(f.offset, first)
	default:
		plan.Next = end
		var res *wire.PolledMessages
		err := a.call(cmd, func(ctx context.Context) (err error) {
			// A plain consumer's poll without auto-commit stores nothing.
			res, err = c.PollMessages(ctx, wire.PollMessages{
				Consumer: wire.SingleConsumer(wire.NumericID(0)), StreamID: sid, TopicID: tid,
				Partition: wire.SomePartition(p.ID), Strategy: wire.TimestampStrategy(ts), Count: 1,
			})
			return err
		})
		if err != nil {
			return plan, wrapf(err, "find the first message at %s in %s/%s partition %d", fmtTimeMicros(ts), sid, tid, p.ID)
		}
		it := res.Messages()
		if m, ok := it.Next(); ok {
			plan.Next = m.Offset
		}
	}
	if plan.Next > first {
		after := plan.Next - 1
		plan.After = &after
	}
	return plan, nil
}

// applyReset joins the group, stores (or deletes) the planned offsets of
// the partitions it is assigned, and leaves. It returns the partitions
// it was not assigned (other members keep them).
func (a *app) applyReset(cmd *cobra.Command, c *client.Client, sid, tid, gid wire.Identifier, plans []resetPlan) ([]uint32, error) {
	consumer := wire.GroupConsumer(gid)
	var as *wire.ConsumerGroupAssignment
	if err := a.call(cmd, func(ctx context.Context) (err error) {
		if err = c.JoinConsumerGroup(ctx, sid, tid, gid); err == nil {
			as, err = c.SyncConsumerGroup(ctx, sid, tid, gid)
		}
		return err
	}); err != nil {
		return nil, wrapf(err, "join group %s of %s/%s", gid, sid, tid)
	}
	defer func() {
		// Leave on a fresh bounded context, even after an interrupt.
		ctx, cancel := a.reqCtx(context.WithoutCancel(cmd.Context()))
		defer cancel()
		_ = c.LeaveConsumerGroup(ctx, sid, tid, gid)
	}()
	var notOwned []uint32
	for i := range plans {
		p := &plans[i]
		if !slices.Contains(as.Partitions, p.Partition) {
			notOwned = append(notOwned, p.Partition)
			continue
		}
		part := wire.SomePartition(p.Partition)
		err := a.call(cmd, func(ctx context.Context) error {
			if p.After != nil {
				return c.StoreConsumerOffset(ctx, consumer, sid, tid, part, *p.After)
			}
			if err := c.DeleteConsumerOffset(ctx, consumer, sid, tid, part); !errors.Is(err, wire.ErrConsumerOffsetNotFound) {
				return err
			}
			return nil
		})
		if err != nil {
			return notOwned, wrapf(err, "reset offset of group %s on %s/%s partition %d", gid, sid, tid, p.Partition)
		}
		p.Done = true
	}
	return notOwned, nil
}
