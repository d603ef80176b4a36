package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/iggo-dev/iggo/wire"
)

// reportEmpty tells standard error that a poll printed nothing: which
// partitions it read, from where, how many partitions the topic has and
// which of them hold messages, so an empty answer is never silent.
func (p *poller) reportEmpty() {
	var t *wire.TopicDetails
	_ = p.a.call(p.cmd, func(ctx context.Context) (err error) { t, err = p.c.GetTopic(ctx, p.sid, p.tid); return err })
	fmt.Fprintln(p.cmd.ErrOrStderr(), p.emptyNotice(t))
}

// emptyNotice is the sentence of reportEmpty; t may be nil when the topic
// could not be read.
func (p *poller) emptyNotice(t *wire.TopicDetails) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no messages in %s/%s", p.sid, p.tid)
	switch {
	case p.group:
		fmt.Fprintf(&b, " for group %s", p.consumer.ID)
		if len(p.parts) > 0 {
			fmt.Fprintf(&b, " (assigned partitions %s)", joinIDs(p.parts))
		} else {
			b.WriteString(" (no partitions assigned)")
		}
	case p.cmd.Flags().Changed("partition"):
		fmt.Fprintf(&b, " partition %d", p.f.partition)
	default:
		b.WriteString(" in any partition")
	}
	b.WriteString(" " + p.describeStart())
	if t == nil {
		return b.String()
	}
	fmt.Fprintf(&b, "; the topic has %d partition(s)", t.PartitionsCount)
	var held []string
	for _, part := range t.Partitions {
		if part.MessagesCount > 0 {
			held = append(held, fmt.Sprintf("partition %d offsets %d-%d", part.ID, part.CurrentOffset+1-min(part.MessagesCount, part.CurrentOffset+1), part.CurrentOffset))
		}
	}
	if len(held) == 0 {
		b.WriteString(", all empty")
	} else {
		b.WriteString(", with messages in " + strings.Join(held, ", "))
	}
	return b.String()
}

// describeStart names the start position of the poll for reportEmpty.
func (p *poller) describeStart() string {
	switch p.start.Kind {
	case wire.PollOffset:
		return "from offset " + strconv.FormatUint(p.start.Value, 10)
	case wire.PollFirst:
		return "from the first message"
	case wire.PollLast:
		return "among the last messages"
	case wire.PollNext:
		return "after the stored offset of " + describeConsumer(p.consumer)
	case wire.PollTimestamp:
		return "from " + fmtTimeMicros(p.start.Value)
	}
	return ""
}

// joinIDs renders partition ids as "0,1,2".
func joinIDs(ids []uint32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(s, ",")
}
