package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultConsumer is the consumer id of poll and offset commands when
// neither --consumer nor --group is given.
const DefaultConsumer = "1"

func (a *app) groupCmd() *cobra.Command {
	cmd := group("group", "Create, inspect, reset and delete consumer groups",
		`Create, inspect, reset and delete consumer groups. Membership belongs to a
connection and ends when it closes, so there is no join or leave here: 'iggo
poll --group NAME' joins for as long as it runs and leaves at the end. 'group
get' shows each partition's committed offset, end offset and lag; 'group
reset' moves the committed offsets.`)
	create := &cobra.Command{
		Use:     "create STREAM TOPIC NAME",
		Short:   "Create a consumer group",
		Example: "  iggo group create orders events billing",
		Args:    exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			name := args[2]
			if isDigits(name) {
				return usagef("group name %q: an all-digit name could only be addressed by id; choose another", name)
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var g *wire.GroupDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { g, err = c.CreateConsumerGroup(ctx, sid, tid, name); return err }); err != nil {
					return wrapf(err, "create group %s in %s/%s", name, sid, tid)
				}
				return a.done(cmd, fmt.Sprintf("consumer group %q created in %s/%s with id %d", g.Name, sid, tid, g.ID), newGroupView(&g.ConsumerGroup))
			})
		},
	}
	get := &cobra.Command{
		Use:   "get STREAM TOPIC GROUP",
		Short: "Show a consumer group: members, and per partition the committed offset, end offset and lag",
		Long: `Show a consumer group: its members with their partitions, and for every
partition of the topic the member owning it, the group's committed offset (the
last message it handled; - when none), the partition's end offset (its newest
message; - when empty) and the lag (end - committed, or every retained message
when nothing is committed), with the total lag.`,
		Example: "  iggo group get orders events billing",
		Args:    exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, gid, err := parseGroup(args)
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var g *wire.GroupDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { g, err = c.GetConsumerGroup(ctx, sid, tid, gid); return err }); err != nil {
					return wrapf(err, "get group %s of %s/%s", gid, sid, tid)
				}
				v := newGroupView(&g.ConsumerGroup)
				for _, m := range g.Members {
					ps := m.Partitions
					if ps == nil {
						ps = []uint32{}
					}
					v.Members = append(v.Members, memberView{ID: m.ID, Partitions: ps})
				}
				offsets, total, err := a.groupLag(cmd, c, sid, tid, gid, g.Members)
				if err != nil {
					return err
				}
				v.Offsets, v.TotalLag = offsets, &total
				return a.print(cmd, v, func(tw *tabwriter.Writer) {
					kv(tw, "ID", g.ID)
					kv(tw, "Name", g.Name)
					kv(tw, "Partitions", g.PartitionsCount)
					kv(tw, "Members", g.MembersCount)
					kv(tw, "Total lag", total)
					if len(g.Members) > 0 {
						row(tw)
						row(tw, "MEMBER", "PARTITIONS")
						for _, m := range g.Members {
							row(tw, m.ID, fmt.Sprint(m.Partitions))
						}
					}
					if len(offsets) > 0 {
						row(tw)
						groupLagTable(tw, offsets)
					}
				})
			})
		},
	}
	list := &cobra.Command{
		Use:     "list STREAM TOPIC",
		Aliases: []string{"ls"},
		Short:   "List a topic's consumer groups",
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var gs wire.ConsumerGroups
				if err := a.call(cmd, func(ctx context.Context) (err error) { gs, err = c.GetConsumerGroups(ctx, sid, tid); return err }); err != nil {
					return wrapf(err, "list groups of %s/%s", sid, tid)
				}
				views := make([]groupView, len(gs))
				for i := range gs {
					views[i] = newGroupView(&gs[i])
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) {
					row(tw, "ID", "NAME", "PARTITIONS", "MEMBERS")
					for _, g := range gs {
						row(tw, g.ID, g.Name, g.PartitionsCount, g.MembersCount)
					}
				})
			})
		},
	}
	del := &cobra.Command{
		Use:     "delete STREAM TOPIC GROUP",
		Aliases: []string{"rm"},
		Short:   "Delete a consumer group with its offsets",
		Args:    exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, gid, err := parseGroup(args)
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.DeleteConsumerGroup(ctx, sid, tid, gid) }); err != nil {
					return wrapf(err, "delete group %s of %s/%s", gid, sid, tid)
				}
				return a.done(cmd, fmt.Sprintf("consumer group %s deleted from %s/%s", gid, sid, tid), map[string]any{"stream": sid.String(), "topic": tid.String(), "group": gid.String(), "deleted": true})
			})
		},
	}
	cmd.AddCommand(create, get, list, del, a.groupResetCmd())
	setCompletion(cmd, a.completeArgs(argStream, argTopic), "create", "list")
	setCompletion(cmd, a.completeArgs(argStream, argTopic, argGroup), "get", "delete", "reset")
	return a.clientCommand(cmd)
}

// parseGroup parses STREAM TOPIC GROUP arguments.
func parseGroup(args []string) (sid, tid, gid wire.Identifier, err error) {
	if sid, tid, err = parseTopic(args[0], args[1]); err != nil {
		return
	}
	gid, err = parseID("group", args[2])
	return
}

// completeGroupFlag completes --group from the STREAM TOPIC arguments.
func (a *app) completeGroupFlag(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) < 2 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.completeArgs("", "", argGroup)(cmd, args[:2], toComplete)
}

// consumerFlags select who reads: --consumer ID or --group NAME.
type consumerFlags struct {
	consumer string
	group    string
}

func (f *consumerFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.consumer, "consumer", DefaultConsumer, "consumer name or numeric id owning the offsets")
	fs.StringVar(&f.group, "group", "", "consumer group name or id (instead of --consumer)")
}

// get returns the consumer the flags name.
func (f *consumerFlags) get(cmd *cobra.Command) (wire.Consumer, error) {
	fs := cmd.Flags()
	if fs.Changed("group") {
		if fs.Changed("consumer") {
			return wire.Consumer{}, usagef("--consumer and --group exclude each other")
		}
		id, err := parseID("group", f.group)
		return wire.GroupConsumer(id), err
	}
	id, err := parseID("consumer", f.consumer)
	return wire.SingleConsumer(id), err
}

// consumerKind is "consumer" or "group" for JSON output.
func consumerKind(c wire.Consumer) string {
	if c.Kind == wire.ConsumerGroupKind {
		return "group"
	}
	return "consumer"
}

// describeConsumer names the consumer for messages.
func describeConsumer(c wire.Consumer) string {
	if c.Kind == wire.ConsumerGroupKind {
		return "group " + c.ID.String()
	}
	return "consumer " + c.ID.String()
}

func (a *app) offsetCmd() *cobra.Command {
	cmd := group("offset", "Read, store and delete consumer offsets",
		`Read, store and delete the offset a consumer (--consumer, default 1) or a consumer
group (--group) has stored on a partition. Without --partition a consumer uses
partition 0; a group needs --partition, and storing for a group is refused
unless the connection is a member owning the partition (use 'iggo poll
--group ... --auto-commit' or 'iggo group reset' instead).`)
	var cf consumerFlags
	var partition uint32
	cf.register(cmd.PersistentFlags())
	cmd.PersistentFlags().Uint32VarP(&partition, "partition", "p", 0, "partition id")
	target := func(cmd *cobra.Command, args []string) (wire.Consumer, wire.Identifier, wire.Identifier, wire.OptPartition, error) {
		sid, tid, err := parseTopic(args[0], args[1])
		if err != nil {
			return wire.Consumer{}, sid, tid, wire.OptPartition{}, err
		}
		consumer, err := cf.get(cmd)
		if err != nil {
			return consumer, sid, tid, wire.OptPartition{}, err
		}
		var p wire.OptPartition
		if cmd.Flags().Changed("partition") {
			p = wire.SomePartition(partition)
		} else if consumer.Kind == wire.ConsumerGroupKind {
			return consumer, sid, tid, p, usagef("a group offset needs --partition")
		}
		return consumer, sid, tid, p, nil
	}
	get := &cobra.Command{
		Use:   "get STREAM TOPIC [--partition N] [--consumer ID | --group G]",
		Short: "Show a stored offset and the partition's current offset",
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			consumer, sid, tid, part, err := target(cmd, args)
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var off *wire.ConsumerOffset
				if err := a.call(cmd, func(ctx context.Context) (err error) {
					off, err = c.GetConsumerOffset(ctx, consumer, sid, tid, part)
					if err == nil && off == nil {
						// The server answers "no offset" for an unknown
						// stream or topic too (as the reference does);
						// name what is missing.
						err = missingTarget(ctx, c, sid, tid)
					}
					return err
				}); err != nil {
					return wrapf(err, "get offset of %s on %s/%s", describeConsumer(consumer), sid, tid)
				}
				type offsetView struct {
					Consumer      string  `json:"consumer"`
					Kind          string  `json:"kind"`
					PartitionID   uint32  `json:"partition_id"`
					CurrentOffset *uint64 `json:"current_offset"`
					StoredOffset  *uint64 `json:"stored_offset"`
				}
				v := offsetView{Consumer: consumer.ID.String(), Kind: consumerKind(consumer), PartitionID: part.ID}
				if off != nil {
					v.PartitionID, v.CurrentOffset, v.StoredOffset = off.PartitionID, &off.CurrentOffset, &off.StoredOffset
				}
				return a.print(cmd, v, func(tw *tabwriter.Writer) {
					if off == nil {
						fmt.Fprintf(tw, "no offset stored for %s on %s/%s partition %d\n", describeConsumer(consumer), sid, tid, part.ID)
						return
					}
					row(tw, "PARTITION", "STORED OFFSET", "CURRENT OFFSET", "LAG")
					lag := uint64(0)
					if off.CurrentOffset > off.StoredOffset {
						lag = off.CurrentOffset - off.StoredOffset
					}
					row(tw, off.PartitionID, off.StoredOffset, off.CurrentOffset, lag)
				})
			})
		},
	}
	store := &cobra.Command{
		Use:     "store STREAM TOPIC OFFSET [--partition N] [--consumer ID | --group G]",
		Aliases: []string{"set"},
		Short:   "Store OFFSET (the last message handled) as the consumer's position",
		Args:    exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			consumer, sid, tid, part, err := target(cmd, args)
			if err != nil {
				return err
			}
			offset, err := parseU64("offset", args[2])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error {
					return c.StoreConsumerOffset(ctx, consumer, sid, tid, part, offset)
				}); err != nil {
					return wrapf(err, "store offset of %s on %s/%s", describeConsumer(consumer), sid, tid)
				}
				return a.done(cmd, fmt.Sprintf("offset %d stored for %s on %s/%s partition %d", offset, describeConsumer(consumer), sid, tid, part.ID),
					map[string]any{"consumer": consumer.ID.String(), "kind": consumerKind(consumer), "partition_id": part.ID, "stored_offset": offset})
			})
		},
	}
	del := &cobra.Command{
		Use:     "delete STREAM TOPIC [--partition N] [--consumer ID | --group G]",
		Aliases: []string{"rm"},
		Short:   "Delete a stored offset",
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			consumer, sid, tid, part, err := target(cmd, args)
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.DeleteConsumerOffset(ctx, consumer, sid, tid, part) }); err != nil {
					return wrapf(err, "delete offset of %s on %s/%s", describeConsumer(consumer), sid, tid)
				}
				return a.done(cmd, fmt.Sprintf("offset of %s on %s/%s partition %d deleted", describeConsumer(consumer), sid, tid, part.ID),
					map[string]any{"consumer": consumer.ID.String(), "kind": consumerKind(consumer), "partition_id": part.ID, "deleted": true})
			})
		},
	}
	cmd.AddCommand(get, store, del)
	setCompletion(cmd, a.completeArgs(argStream, argTopic), "get", "store", "delete")
	cmd.RegisterFlagCompletionFunc("group", a.completeGroupFlag)
	return a.clientCommand(cmd)
}

// missingTarget returns StreamIdNotFound or TopicIdNotFound when the stream
// or the topic does not exist, nil when both do (or the check itself fails:
// the caller's answer stands then).
func missingTarget(ctx context.Context, c *client.Client, sid, tid wire.Identifier) error {
	if _, err := c.GetStream(ctx, sid); errors.Is(err, wire.ErrStreamIDNotFound) {
		return err
	}
	if _, err := c.GetTopic(ctx, sid, tid); errors.Is(err, wire.ErrTopicIDNotFound) {
		return err
	}
	return nil
}
