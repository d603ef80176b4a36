package cli

import (
	"bufio"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// Poll defaults.
const (
	// defaultPollLimit is how many messages `iggo poll` prints without
	// --count and without --follow.
	defaultPollLimit = 10
	// defaultFollowLast is how many messages --last shows first in
	// --follow mode without --count.
	defaultFollowLast = 10
	// maxPollCount is the most messages one POLL_MESSAGES asks for.
	maxPollCount = 1000
	// groupResync is how long a group assignment is used before it is
	// synced again in --follow mode (the official Go SDK caches it 5 s).
	groupResync = 5 * time.Second
)

type pollFlags struct {
	partition  uint32
	offset     uint64
	first      bool
	last       bool
	next       bool
	timestamp  string
	count      uint32
	follow     bool
	autoCommit bool
	raw        bool
	delimiter  string
	format     string
	interval   time.Duration
	cf         consumerFlags
}

func (a *app) pollCmd() *cobra.Command {
	var f pollFlags
	cmd := &cobra.Command{
		Use:   "poll STREAM TOPIC [--partition N] [--offset N | --first | --last | --next | --timestamp T] [--count N] [--follow]",
		Short: "Read messages from a topic",
		Long: `Read messages from a topic and print them: as a table (default), as JSON lines
(-o json, one object per message), as YAML documents (-o yaml), only the
payloads (--raw, each followed by --delimiter, a newline by default; with
--delimiter '' the payloads are written back to back), or through a Go template
(--format, see below).

The table shows at most 100 characters of a payload followed by its
full size; a payload that is not UTF-8 text is shown as a hex preview and
one with control characters Go-quoted. -o json, -o yaml and --raw carry the
full bytes (JSON and YAML as "payload" when it is UTF-8, else as
"payload_base64").

Where to start in each partition: --offset N, --first (the oldest message),
--last (the last --count messages), --next (after the stored offset) or
--timestamp T (RFC 3339, microseconds since the epoch, or a duration ago such
as 15m). The default is --next when --consumer or --group is given, else
--first.

Without --partition a consumer reads every partition of the topic, partition
by partition: all of partition 0 from the start position, then partition 1,
and so on (without --follow; with --follow it polls the partitions in turn).
Messages are not merged by timestamp. With --group NAME the connection joins the group for as long as the command
runs, reads the partitions the server assigns, and leaves at the end.

--count N prints at most N messages (default 10; with --follow, unlimited).
Without --follow the command ends when the partitions have nothing more;
with --follow it waits for new messages until --count is reached or it is
interrupted (Ctrl-C ends it with exit code 0). --auto-commit stores the
offset of the last message of every poll for the consumer or group.

A poll that finds nothing prints nothing on standard output, says so on
standard error (the partitions, the start position and where the topic's
messages are) and exits 0.

--format TEMPLATE prints each message through a Go text/template followed
by a newline. Fields: .Partition .Offset .ID .Timestamp (a time.Time)
.TimestampMicros .OriginTimestampMicros .Checksum .Size (payload bytes)
.Headers (a map) .Payload (the bytes as a string); functions: hex, base64,
quote, json, preview (the table's rendering), trunc N.`,
		Example: `  iggo poll orders events --partition 0 --offset 0 --count 10
  iggo poll orders events --last --count 5 -o json
  iggo poll orders events --group billing --auto-commit --follow
  iggo poll logs app --follow --raw
  iggo poll orders events --format '{{.Partition}}/{{.Offset}} {{.Timestamp.Format "15:04:05"}} {{.Payload}}'`,
		Args:              exactArgs(2),
		RunE:              func(cmd *cobra.Command, args []string) error { return a.runPoll(cmd, args, &f) },
		ValidArgsFunction: a.completeArgs(argStream, argTopic),
	}
	fs := cmd.Flags()
	fs.Uint32VarP(&f.partition, "partition", "p", 0, "read only this partition (default: every partition; not with --group)")
	fs.Uint64Var(&f.offset, "offset", 0, "start at this offset")
	fs.BoolVar(&f.first, "first", false, "start at the oldest message")
	fs.BoolVar(&f.last, "last", false, "start each partition at its last --count messages (with --follow and no --count, the last 10)")
	fs.BoolVar(&f.next, "next", false, "start after the consumer's or group's stored offset")
	fs.StringVar(&f.timestamp, "timestamp", "", "start at the first message stored at or after this time")
	fs.Uint32VarP(&f.count, "count", "n", 0, "print at most this many messages (default 10; with --follow unlimited)")
	fs.BoolVarP(&f.follow, "follow", "f", false, "keep waiting for new messages")
	fs.BoolVar(&f.autoCommit, "auto-commit", false, "store the offset of the last message of each poll")
	fs.BoolVar(&f.raw, "raw", false, "print only the payloads, each followed by --delimiter")
	fs.StringVar(&f.delimiter, "delimiter", "\n", "with --raw, what follows each payload ('' for nothing)")
	fs.StringVar(&f.format, "format", "", "print each message through this Go template (see above)")
	fs.DurationVar(&f.interval, "interval", client.DefaultPollInterval, "with --follow, the pause after polls that found nothing")
	f.cf.register(fs)
	cmd.RegisterFlagCompletionFunc("group", a.completeGroupFlag)
	return a.clientCommand(cmd)
}

// poller is the state of one `iggo poll` run.
type poller struct {
	a        *app
	cmd      *cobra.Command
	c        *client.Client
	sid, tid wire.Identifier
	consumer wire.Consumer
	group    bool
	start    wire.PollingStrategy
	limit    int // 0 = unlimited
	f        *pollFlags

	parts    []uint32
	pos      map[uint32]uint64 // next offset per partition once one was read
	synced   bool
	lastSync time.Time
	printed  int
	out      *bufio.Writer
	format   messageWriter
}

func (a *app) runPoll(cmd *cobra.Command, args []string, f *pollFlags) error {
	sid, tid, err := parseTopic(args[0], args[1])
	if err != nil {
		return err
	}
	consumer, err := f.cf.get(cmd)
	if err != nil {
		return err
	}
	fl := cmd.Flags()
	group := consumer.Kind == wire.ConsumerGroupKind
	if group && fl.Changed("partition") {
		return usagef("--partition does not go with --group: the server assigns the group's partitions")
	}
	start, err := f.strategy(cmd, fl.Changed("consumer") || group)
	if err != nil {
		return err
	}
	format, err := a.messageWriter(f)
	if err != nil {
		return err
	}
	limit := int(f.count)
	if !fl.Changed("count") && !f.follow {
		limit = defaultPollLimit
	}
	if fl.Changed("count") && f.count == 0 {
		return usagef("--count 0: want at least 1 (omit it with --follow for no limit)")
	}
	if f.interval <= 0 {
		return usagef("--interval must be positive")
	}
	c, err := a.dial(cmd, true)
	if err != nil {
		return err
	}
	defer c.Close()
	p := &poller{
		a: a, cmd: cmd, c: c, sid: sid, tid: tid, consumer: consumer, group: group, start: start, limit: limit, f: f,
		pos: map[uint32]uint64{}, out: bufio.NewWriter(cmd.OutOrStdout()), format: format,
	}
	err = p.run()
	if err == nil && p.printed == 0 {
		p.reportEmpty()
	}
	if ferr := p.out.Flush(); err == nil {
		err = ferr
	}
	if group {
		// Leave even after an interrupt, on a fresh bounded context.
		ctx, cancel := a.reqCtx(context.WithoutCancel(cmd.Context()))
		if lerr := c.LeaveConsumerGroup(ctx, sid, tid, consumer.ID); lerr != nil && err == nil && !errors.Is(lerr, wire.ErrConsumerGroupMemberNotFound) {
			err = wrapf(lerr, "leave group %s", consumer.ID)
		}
		cancel()
	}
	if f.follow && errors.Is(err, context.Canceled) && cmd.Context().Err() != nil {
		return nil // Ctrl-C ends --follow normally
	}
	return err
}

// strategy returns the start position the flags choose.
func (f *pollFlags) strategy(cmd *cobra.Command, named bool) (wire.PollingStrategy, error) {
	fl := cmd.Flags()
	var chosen []string
	for _, n := range []string{"offset", "first", "last", "next", "timestamp"} {
		if fl.Changed(n) {
			chosen = append(chosen, "--"+n)
		}
	}
	if len(chosen) > 1 {
		return wire.PollingStrategy{}, usagef("%s exclude each other: choose one start position", strings.Join(chosen, " and "))
	}
	switch {
	case fl.Changed("offset"):
		return wire.OffsetStrategy(f.offset), nil
	case fl.Changed("first") && f.first:
		return wire.FirstStrategy(), nil
	case fl.Changed("last") && f.last:
		return wire.LastStrategy(), nil
	case fl.Changed("next") && f.next:
		return wire.NextStrategy(), nil
	case fl.Changed("timestamp"):
		us, err := parseTimestamp(f.timestamp, time.Now())
		if err != nil {
			return wire.PollingStrategy{}, err
		}
		return wire.TimestampStrategy(us), nil
	case named:
		return wire.NextStrategy(), nil
	}
	return wire.FirstStrategy(), nil
}

// run polls until the limit, the end of the partitions (without
// --follow), or an error.
func (p *poller) run() error {
	ctx := p.cmd.Context()
	if err := p.setup(); err != nil {
		return err
	}
	rr, empty := 0, 0
	for p.limit == 0 || p.printed < p.limit {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.group && (!p.synced || p.f.follow && time.Since(p.lastSync) >= groupResync) {
			if err := p.sync(); err != nil {
				return err
			}
			rr, empty = 0, 0
		}
		if len(p.parts) == 0 {
			if !p.f.follow {
				return nil
			}
			if err := sleepCtx(ctx, p.f.interval); err != nil {
				return err
			}
			p.synced = false
			continue
		}
		part := p.parts[rr%len(p.parts)]
		rr++
		n, err := p.pollOnce(part)
		if err != nil {
			return err
		}
		if n > 0 {
			empty = 0
			if !p.f.follow {
				rr-- // partition by partition: stay until it has nothing more
			}
			if err := p.out.Flush(); err != nil {
				return err
			}
			continue
		}
		empty++
		if empty >= len(p.parts) {
			empty = 0
			if !p.f.follow {
				return nil
			}
			if err := sleepCtx(ctx, p.f.interval); err != nil {
				return err
			}
		}
	}
	return nil
}

// setup joins the group or finds the partitions to read.
func (p *poller) setup() error {
	if p.group {
		err := p.a.call(p.cmd, func(ctx context.Context) error { return p.c.JoinConsumerGroup(ctx, p.sid, p.tid, p.consumer.ID) })
		return wrapf(err, "join group %s of %s/%s", p.consumer.ID, p.sid, p.tid)
	}
	if p.cmd.Flags().Changed("partition") {
		p.parts = []uint32{p.f.partition}
		return nil
	}
	t, err := p.a.getTopic(p.cmd, p.c, p.sid, p.tid)
	if err != nil {
		return err
	}
	for _, part := range t.Partitions {
		p.parts = append(p.parts, part.ID)
	}
	if len(p.parts) == 0 {
		return wrapf(wire.ErrNoPartitions, "poll %s/%s", p.sid, p.tid)
	}
	return nil
}

// sync fetches the group assignment, joining again when the server no
// longer knows this member.
func (p *poller) sync() error {
	var as *wire.ConsumerGroupAssignment
	err := p.a.call(p.cmd, func(ctx context.Context) (err error) {
		as, err = p.c.SyncConsumerGroup(ctx, p.sid, p.tid, p.consumer.ID)
		if errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
			if err = p.c.JoinConsumerGroup(ctx, p.sid, p.tid, p.consumer.ID); err == nil {
				as, err = p.c.SyncConsumerGroup(ctx, p.sid, p.tid, p.consumer.ID)
			}
		}
		return err
	})
	if err != nil {
		return wrapf(err, "sync group %s of %s/%s", p.consumer.ID, p.sid, p.tid)
	}
	parts := slices.Clone(as.Partitions)
	slices.Sort(parts)
	for part := range p.pos {
		if !slices.Contains(parts, part) {
			delete(p.pos, part)
		}
	}
	p.parts, p.synced, p.lastSync = parts, true, time.Now()
	return nil
}

// pollOnce polls one partition and prints what it returns.
func (p *poller) pollOnce(part uint32) (int, error) {
	req := wire.PollMessages{
		Consumer: p.consumer, StreamID: p.sid, TopicID: p.tid, Partition: wire.SomePartition(part),
		Strategy: p.start, Count: maxPollCount, AutoCommit: p.f.autoCommit,
	}
	if next, ok := p.pos[part]; ok {
		req.Strategy = wire.OffsetStrategy(next)
	} else if req.Strategy.Kind == wire.PollLast && p.limit == 0 {
		req.Count = defaultFollowLast
	}
	if p.limit > 0 {
		req.Count = uint32(min(p.limit-p.printed, int(req.Count)))
	}
	var res *wire.PolledMessages
	err := p.a.call(p.cmd, func(ctx context.Context) (err error) { res, err = p.c.PollMessages(ctx, req); return err })
	switch {
	case p.group && (errors.Is(err, wire.ErrConsumerGroupMemberNotFound) || errors.Is(err, wire.ErrConsumerGroupPartitionNotOwned)):
		p.synced = false
		return 0, nil
	case err != nil:
		return 0, wrapf(err, "poll %s/%s partition %d", p.sid, p.tid, part)
	case p.group && res.PartitionID == wire.PollResyncPartition:
		p.synced = false
		return 0, nil
	}
	n := 0
	it := res.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		if p.limit > 0 && p.printed >= p.limit {
			break
		}
		if err := p.format(p.out, part, &m); err != nil {
			return n, err
		}
		p.pos[part] = m.Offset + 1
		p.printed++
		n++
	}
	return n, nil
}
