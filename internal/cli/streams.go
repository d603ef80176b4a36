package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

func (a *app) streamCmd() *cobra.Command {
	cmd := group("stream", "Create, inspect, rename, purge and delete streams", "")
	create := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create a stream",
		Example: "  iggo stream create orders",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if isDigits(name) {
				return usagef("stream name %q: an all-digit name could only be addressed by id; choose another", name)
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var s *wire.StreamDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { s, err = c.CreateStream(ctx, name); return err }); err != nil {
					return wrapf(err, "create stream %s", name)
				}
				return a.done(cmd, fmt.Sprintf("stream %q created with id %d", s.Name, s.ID), newStreamView(&s.Stream))
			})
		},
	}
	get := &cobra.Command{
		Use:   "get STREAM",
		Short: "Show a stream with its topics",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, err := parseID("stream", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var s *wire.StreamDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { s, err = c.GetStream(ctx, sid); return err }); err != nil {
					return wrapf(err, "get stream %s", sid)
				}
				v := newStreamView(&s.Stream)
				v.Topics = make([]topicView, len(s.Topics))
				for i := range s.Topics {
					v.Topics[i] = newTopicView(&s.Topics[i])
				}
				return a.print(cmd, v, func(tw *tabwriter.Writer) {
					kv(tw, "ID", s.ID)
					kv(tw, "Name", s.Name)
					kv(tw, "Created", fmtTime(s.CreatedAt))
					kv(tw, "Topics", s.TopicsCount)
					kv(tw, "Messages", s.MessagesCount)
					kv(tw, "Size", fmtSize(s.SizeBytes))
					if len(s.Topics) > 0 {
						row(tw)
						topicsTable(tw, s.Topics)
					}
				})
			})
		},
	}
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the streams",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var ss wire.Streams
				if err := a.call(cmd, func(ctx context.Context) (err error) { ss, err = c.GetStreams(ctx); return err }); err != nil {
					return wrapf(err, "list streams")
				}
				views := make([]streamView, len(ss))
				for i := range ss {
					views[i] = newStreamView(&ss[i])
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) {
					row(tw, "ID", "NAME", "TOPICS", "MESSAGES", "SIZE", "CREATED")
					for _, s := range ss {
						row(tw, s.ID, s.Name, s.TopicsCount, s.MessagesCount, fmtSize(s.SizeBytes), fmtTime(s.CreatedAt))
					}
				})
			})
		},
	}
	update := &cobra.Command{
		Use:     "update STREAM NEW_NAME",
		Aliases: []string{"rename"},
		Short:   "Rename a stream",
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, err := parseID("stream", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.UpdateStream(ctx, sid, args[1]) }); err != nil {
					return wrapf(err, "update stream %s", sid)
				}
				return a.done(cmd, fmt.Sprintf("stream %s renamed to %q", sid, args[1]), map[string]any{"stream": sid.String(), "name": args[1]})
			})
		},
	}
	cmd.AddCommand(create, get, list, update,
		a.simpleStreamCmd("delete STREAM", "Delete a stream with all its topics and messages", "deleted", (*client.Client).DeleteStream, "rm"),
		a.simpleStreamCmd("purge STREAM", "Delete every message of a stream (topics, groups stay; offsets are cleared)", "purged", (*client.Client).PurgeStream),
	)
	setCompletion(cmd, a.completeArgs(argStream), "get", "update", "delete", "purge")
	return a.clientCommand(cmd)
}

// simpleStreamCmd is a command acting on one stream with no reply.
func (a *app) simpleStreamCmd(use, short, verb string, f func(*client.Client, context.Context, wire.Identifier) error, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Aliases: aliases,
		Short:   short,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, err := parseID("stream", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return f(c, ctx, sid) }); err != nil {
					return wrapf(err, "%s stream %s", strings.Fields(use)[0], sid)
				}
				return a.done(cmd, fmt.Sprintf("stream %s %s", sid, verb), map[string]any{"stream": sid.String(), verb: true})
			})
		},
	}
}

func topicsTable(tw *tabwriter.Writer, ts []wire.Topic) {
	row(tw, "ID", "NAME", "PARTITIONS", "MESSAGES", "SIZE", "EXPIRY", "MAX SIZE", "COMPRESSION", "CREATED")
	for _, t := range ts {
		row(tw, t.ID, t.Name, t.PartitionsCount, t.MessagesCount, fmtSize(t.SizeBytes), fmtExpiry(t.MessageExpiry), fmtMaxSize(t.MaxTopicSize), t.CompressionAlgorithm, fmtTime(t.CreatedAt))
	}
}

// topicFlags are the topic option flags of `topic create` and
// `topic update`.
type topicFlags struct {
	expiry, maxSize, segmentSize, compression string
	localSize, localAge                       string
	fsync                                     bool
	extra                                     []string
}

func (f *topicFlags) register(cmd *cobra.Command, create bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.expiry, "message-expiry", "", "delete messages older than this: a duration such as 7d, 12h, 30m, or never")
	fs.StringVar(&f.maxSize, "max-topic-size", "", "delete the oldest segments beyond this size: 1GiB, 500MB, ..., or unlimited")
	fs.StringVar(&f.compression, "compression", "", "compression recorded for the topic: none or gzip")
	fs.StringVar(&f.localSize, "local-retention-size", "", "tiered storage: uploaded sealed data each partition keeps on local disk: 10GiB, ..., keep-all, or default (the server's setting)")
	fs.StringVar(&f.localAge, "local-retention-age", "", "tiered storage: drop uploaded sealed data older than this from local disk: 2d, 12h, ..., never, or default (the server's setting)")
	if create {
		fs.StringVar(&f.segmentSize, "segment-size", "", "segment file size: 1MiB to 1GiB, a multiple of 512 bytes (server default 1GiB)")
		fs.BoolVar(&f.fsync, "enforce-fsync", false, "fsync every saved batch before acknowledging it")
	}
	fs.StringArrayVar(&f.extra, "option", nil, "any catalog option as KEY=VALUE, sent as text for the server to parse (see 'iggo options topic'); repeatable")
}

// parseLocalRetentionSize parses --local-retention-size: a size,
// "keep-all" (or "all", "unlimited", "none": u64::MAX, keep every uploaded
// sealed segment locally) or "default" (0: the server's
// tiered_storage.local_retention_size).
func parseLocalRetentionSize(flag, s string) (uint64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "keep-all", "keep_all", "all":
		return wire.LocalRetentionKeepAll, nil
	case "default", "server_default":
		return 0, nil
	}
	return parseSize(flag, s, true)
}

// options builds the options block from the flags that were given.
func (f *topicFlags) options(cmd *cobra.Command) (wire.Options, error) {
	var opts wire.Options
	fs := cmd.Flags()
	if fs.Changed("compression") {
		c, err := wire.ParseCompressionAlgorithm(strings.ToLower(f.compression))
		if err != nil {
			return nil, usagef("--compression %q: want none or gzip", f.compression)
		}
		opts = append(opts, wire.StringOption(wire.TopicOptCompressionAlgorithm, c.String()))
	}
	if fs.Changed("message-expiry") {
		v, err := parseExpiry("--message-expiry", f.expiry)
		if err != nil {
			return nil, err
		}
		opts = append(opts, wire.Uint64Option(wire.TopicOptMessageExpiry, v))
	}
	if fs.Changed("max-topic-size") {
		v, err := parseSize("--max-topic-size", f.maxSize, true)
		if err != nil {
			return nil, err
		}
		opts = append(opts, wire.Uint64Option(wire.TopicOptMaxTopicSize, v))
	}
	if fs.Changed("segment-size") {
		v, err := parseSize("--segment-size", f.segmentSize, false)
		if err != nil {
			return nil, err
		}
		opts = append(opts, wire.Uint64Option(wire.TopicOptSegmentSize, v))
	}
	if fs.Changed("enforce-fsync") {
		opts = append(opts, wire.BoolOption(wire.TopicOptEnforceFsync, f.fsync))
	}
	if fs.Changed("local-retention-size") {
		v, err := parseLocalRetentionSize("--local-retention-size", f.localSize)
		if err != nil {
			return nil, err
		}
		opts = append(opts, wire.Uint64Option(wire.TopicOptLocalRetentionSize, v))
	}
	if fs.Changed("local-retention-age") {
		v, err := parseExpiry("--local-retention-age", f.localAge)
		if err != nil {
			return nil, err
		}
		opts = append(opts, wire.Uint64Option(wire.TopicOptLocalRetentionAge, v))
	}
	for _, e := range f.extra {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" || v == "" {
			return nil, usagef("--option %q: want KEY=VALUE", e)
		}
		if _, dup := opts.Get(k); dup {
			return nil, usagef("--option %q: %s is already set", e, k)
		}
		opts = append(opts, wire.StringOption(k, v))
	}
	if err := opts.Validate(); err != nil {
		return nil, usagef("topic options: %v", err)
	}
	return opts, nil
}

func (a *app) topicCmd() *cobra.Command {
	cmd := group("topic", "Create, inspect, update, purge and delete topics", "")
	var cf topicFlags
	create := &cobra.Command{
		Use:   "create STREAM NAME [PARTITIONS]",
		Short: "Create a topic with PARTITIONS partitions (default 1)",
		Example: `  iggo topic create orders events 3
  iggo topic create orders audit 1 --message-expiry 7d --max-topic-size 10GiB --segment-size 256MiB --enforce-fsync`,
		Args: rangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, err := parseID("stream", args[0])
			if err != nil {
				return err
			}
			name := args[1]
			if isDigits(name) {
				return usagef("topic name %q: an all-digit name could only be addressed by id; choose another", name)
			}
			parts := uint32(1)
			if len(args) == 3 {
				if parts, err = parseU32("partitions", args[2]); err != nil {
					return err
				}
				if parts == 0 {
					// The server accepts it, but every send then answers
					// ResourceNotFound: there is nowhere to store a message.
					return usagef("partitions 0: a topic needs at least 1 partition to hold messages (add more later with 'iggo partition create')")
				}
			}
			opts, err := cf.options(cmd)
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var t *wire.TopicDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) {
					t, err = c.CreateTopic(ctx, sid, name, parts, opts...)
					return err
				}); err != nil {
					return wrapf(replicationHint(err), "create topic %s in stream %s", name, sid)
				}
				v := newTopicView(&t.Topic)
				return a.done(cmd, fmt.Sprintf("topic %q created in stream %s with id %d and %d partition(s)", t.Name, sid, t.ID, t.PartitionsCount), v)
			})
		},
	}
	cf.register(create, true)

	get := &cobra.Command{
		Use:   "get STREAM TOPIC",
		Short: "Show a topic with its options and partitions",
		Long: `Show a topic with its options and partitions. With tiered storage on, a
second table splits each partition's bytes between local disk and the
bucket (PARTITION_TIERS): LOCAL is on this node's disk, REMOTE in the
bucket (some of it may still have a local copy), REMOTE ONLY in the bucket
alone, PENDING sealed locally and not uploaded yet.`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				t, err := a.getTopic(cmd, c, sid, tid)
				if err != nil {
					return err
				}
				tiers := a.partitionTiers(cmd, c, sid, tid)
				v := newTopicView(&t.Topic)
				v.Partitions = partitionViews(t.Partitions)
				withTierViews(v.Partitions, tiers)
				return a.print(cmd, v, func(tw *tabwriter.Writer) {
					kv(tw, "ID", t.ID)
					kv(tw, "Name", t.Name)
					kv(tw, "Created", fmtTime(t.CreatedAt))
					kv(tw, "Partitions", t.PartitionsCount)
					kv(tw, "Messages", t.MessagesCount)
					kv(tw, "Size", fmtSize(t.SizeBytes))
					kv(tw, "Message expiry", fmtExpiry(t.MessageExpiry))
					kv(tw, "Max topic size", fmtMaxSize(t.MaxTopicSize))
					kv(tw, "Compression", t.CompressionAlgorithm)
					if opts := topicOptions(&t.Topic); len(opts) > 0 {
						row(tw)
						row(tw, "OPTION", "VALUE", "SET BY")
						for _, o := range opts {
							row(tw, o.Key, fmtOptionValue(o.Key, o.Kind, o.Value), o.by)
						}
					}
					if len(t.Partitions) > 0 {
						row(tw)
						partitionsTable(tw, t.Partitions)
					}
					if len(tiers) > 0 {
						row(tw)
						tiersTable(tw, tiers)
					}
				})
			})
		},
	}
	list := &cobra.Command{
		Use:     "list STREAM",
		Aliases: []string{"ls"},
		Short:   "List a stream's topics",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, err := parseID("stream", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var ts wire.Topics
				if err := a.call(cmd, func(ctx context.Context) (err error) { ts, err = c.GetTopics(ctx, sid); return err }); err != nil {
					return wrapf(err, "list topics of stream %s", sid)
				}
				if len(ts) == 0 {
					// The server lists a missing stream as empty; say so.
					err := a.call(cmd, func(ctx context.Context) error { _, err := c.GetStream(ctx, sid); return err })
					if errors.Is(err, wire.ErrStreamIDNotFound) {
						return wrapf(err, "list topics of stream %s", sid)
					}
				}
				views := make([]topicView, len(ts))
				for i := range ts {
					views[i] = newTopicView(&ts[i])
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) { topicsTable(tw, ts) })
			})
		},
	}
	var uf topicFlags
	var newName string
	update := &cobra.Command{
		Use:   "update STREAM TOPIC [--name NEW_NAME] [--message-expiry D] [--max-topic-size S] [--compression C] [--local-retention-size S] [--local-retention-age D]",
		Short: "Rename a topic or change its expiry, maximum size, compression or local retention",
		Example: `  iggo topic update orders events --message-expiry 30d
  iggo topic update orders events --name order-events`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			opts, err := uf.options(cmd)
			if err != nil {
				return err
			}
			if newName == "" && len(opts) == 0 {
				return usagef("topic update: nothing to change (give --name, --message-expiry, --max-topic-size, --compression, --local-retention-size, --local-retention-age or --option)")
			}
			return a.withClient(cmd, func(c *client.Client) error {
				name := newName
				if name == "" {
					// The request always carries the name: keep the current one.
					t, err := a.getTopic(cmd, c, sid, tid)
					if err != nil {
						return err
					}
					name = t.Name
				}
				if err := a.call(cmd, func(ctx context.Context) error { return c.UpdateTopic(ctx, sid, tid, name, opts...) }); err != nil {
					return wrapf(err, "update topic %s/%s", sid, tid)
				}
				return a.done(cmd, fmt.Sprintf("topic %s/%s updated", sid, tid), map[string]any{"stream": sid.String(), "topic": tid.String(), "name": name, "updated": true})
			})
		},
	}
	uf.register(update, false)
	update.Flags().StringVar(&newName, "name", "", "new topic name")

	cmd.AddCommand(create, get, list, update,
		a.simpleTopicCmd("delete STREAM TOPIC", "Delete a topic with its partitions, messages, groups and offsets", "deleted", (*client.Client).DeleteTopic, "rm"),
		a.simpleTopicCmd("purge STREAM TOPIC", "Delete every message of a topic (groups stay; offsets are cleared)", "purged", (*client.Client).PurgeTopic),
	)
	setCompletion(cmd, a.completeArgs(argStream), "create", "list")
	setCompletion(cmd, a.completeArgs(argStream, argTopic), "get", "update", "delete", "purge")
	return a.clientCommand(cmd)
}

// shownOption is a topic option with who set it.
type shownOption struct {
	wire.Option
	by string
}

// topicOptions lists a topic's explicit and derived options by key.
func topicOptions(t *wire.Topic) []shownOption {
	var out []shownOption
	for _, o := range t.Options {
		out = append(out, shownOption{o, "explicit"})
	}
	for _, o := range t.DerivedOptions {
		out = append(out, shownOption{o, "default"})
	}
	slices.SortStableFunc(out, func(x, y shownOption) int { return strings.Compare(x.Key, y.Key) })
	return out
}

// parseTopic parses STREAM TOPIC arguments.
func parseTopic(stream, topic string) (wire.Identifier, wire.Identifier, error) {
	sid, err := parseID("stream", stream)
	if err != nil {
		return sid, sid, err
	}
	tid, err := parseID("topic", topic)
	return sid, tid, err
}

// getTopic fetches a topic, naming it in errors.
func (a *app) getTopic(cmd *cobra.Command, c *client.Client, sid, tid wire.Identifier) (*wire.TopicDetails, error) {
	var t *wire.TopicDetails
	err := a.call(cmd, func(ctx context.Context) (err error) {
		t, err = c.GetTopic(ctx, sid, tid)
		if errors.Is(err, wire.ErrTopicIDNotFound) {
			// The server answers a missing stream as a missing topic; name
			// the stream when it is the one missing.
			if _, serr := c.GetStream(ctx, sid); errors.Is(serr, wire.ErrStreamIDNotFound) {
				err = serr
			}
		}
		return err
	})
	return t, wrapf(err, "get topic %s/%s", sid, tid)
}

// simpleTopicCmd is a command acting on one topic with no reply.
func (a *app) simpleTopicCmd(use, short, verb string, f func(*client.Client, context.Context, wire.Identifier, wire.Identifier) error, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Aliases: aliases,
		Short:   short,
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return f(c, ctx, sid, tid) }); err != nil {
					return wrapf(err, "%s topic %s/%s", strings.Fields(use)[0], sid, tid)
				}
				return a.done(cmd, fmt.Sprintf("topic %s/%s %s", sid, tid, verb), map[string]any{"stream": sid.String(), "topic": tid.String(), verb: true})
			})
		},
	}
}

func partitionViews(ps []wire.PartitionInfo) []partitionView {
	out := make([]partitionView, len(ps))
	for i := range ps {
		out[i] = newPartitionView(&ps[i])
	}
	return out
}

func partitionsTable(tw *tabwriter.Writer, ps []wire.PartitionInfo) {
	row(tw, "PARTITION", "SEGMENTS", "CURRENT OFFSET", "MESSAGES", "SIZE", "CREATED")
	for _, p := range ps {
		row(tw, p.ID, p.SegmentsCount, p.CurrentOffset, p.MessagesCount, fmtSize(p.SizeBytes), fmtTime(p.CreatedAt))
	}
}

func (a *app) partitionCmd() *cobra.Command {
	cmd := group("partition", "List, add, remove and verify a topic's partitions", "")
	list := a.partitionListCmd("List a topic's partitions")
	change := func(use, short, verb string, f func(*client.Client, context.Context, wire.Identifier, wire.Identifier, uint32) error) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  rangeArgs(2, 3),
			RunE: func(cmd *cobra.Command, args []string) error {
				sid, tid, err := parseTopic(args[0], args[1])
				if err != nil {
					return err
				}
				count := uint32(1)
				if len(args) == 3 {
					if count, err = parseU32("count", args[2]); err != nil {
						return err
					}
				}
				return a.withClient(cmd, func(c *client.Client) error {
					if err := a.call(cmd, func(ctx context.Context) error { return f(c, ctx, sid, tid, count) }); err != nil {
						return wrapf(err, "%s partitions of topic %s/%s", strings.Fields(use)[0], sid, tid)
					}
					return a.done(cmd, fmt.Sprintf("%d partition(s) %s in topic %s/%s", count, verb, sid, tid), map[string]any{"stream": sid.String(), "topic": tid.String(), verb: count})
				})
			},
		}
	}
	cmd.AddCommand(list,
		change("create STREAM TOPIC [COUNT]", "Add COUNT partitions (default 1) after the highest id", "added", (*client.Client).CreatePartitions),
		change("delete STREAM TOPIC [COUNT]", "Remove the COUNT partitions (default 1) with the highest ids, with their messages", "deleted", (*client.Client).DeletePartitions),
		a.partitionVerifyCmd(),
	)
	setCompletion(cmd, a.completeArgs(argStream, argTopic), "list", "create", "delete", "verify")
	return a.clientCommand(cmd)
}

func (a *app) segmentCmd() *cobra.Command {
	cmd := group("segment", "Delete a partition's oldest segments", "")
	del := &cobra.Command{
		Use:   "delete STREAM TOPIC PARTITION [COUNT]",
		Short: "Delete the COUNT (default 1) oldest sealed segments of a partition; the active segment is kept",
		Args:  rangeArgs(3, 4),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			part, err := parseU32("partition", args[2])
			if err != nil {
				return err
			}
			count := uint32(1)
			if len(args) == 4 {
				if count, err = parseU32("count", args[3]); err != nil {
					return err
				}
			}
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.DeleteSegments(ctx, sid, tid, part, count) }); err != nil {
					return wrapf(err, "delete segments of %s/%s partition %d", sid, tid, part)
				}
				return a.done(cmd, fmt.Sprintf("up to %d sealed segment(s) deleted from %s/%s partition %d", count, sid, tid, part),
					map[string]any{"stream": sid.String(), "topic": tid.String(), "partition": part, "segments": count})
			})
		},
	}
	list := a.partitionListCmd("Show the number of segments of each partition")
	cmd.AddCommand(del, list)
	setCompletion(cmd, a.completeArgs(argStream, argTopic), "delete", "list")
	return a.clientCommand(cmd)
}

// partitionListCmd is `partition list` and `segment list`: the topic's
// partitions with their counters (segments, offsets, sizes).
func (a *app) partitionListCmd(short string) *cobra.Command {
	return &cobra.Command{
		Use:     "list STREAM TOPIC",
		Aliases: []string{"ls"},
		Short:   short,
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				t, err := a.getTopic(cmd, c, sid, tid)
				if err != nil {
					return err
				}
				return a.print(cmd, partitionViews(t.Partitions), func(tw *tabwriter.Writer) { partitionsTable(tw, t.Partitions) })
			})
		},
	}
}
