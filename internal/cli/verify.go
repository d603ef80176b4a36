package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/httpapi"
	"github.com/iggo-dev/iggo/wire"
)

// verifyView is the JSON view of `iggo partition verify`: the stream and
// topic asked for, and the partitions as the HTTP API's
// POST .../partitions/verify answers them.
type verifyView struct {
	Stream string `json:"stream"`
	Topic  string `json:"topic"`
	httpapi.VerifyPartitions
}

func newVerifyView(stream, topic wire.Identifier, r *wire.VerifyPartitionReply) verifyView {
	return verifyView{Stream: stream.String(), Topic: topic.String(), VerifyPartitions: httpapi.VerifyJSON(r)}
}

// writeVerify writes the readable result: one line per partition, then
// one indented line per damaged range.
func writeVerify(tw *tabwriter.Writer, v verifyView) {
	for _, p := range v.Partitions {
		head := fmt.Sprintf("partition %d: ", p.Partition)
		switch p.Status {
		case wire.VerifyNotHeld.String():
			fmt.Fprintln(tw, head+"not held by this node (`iggo cluster partitions` lists the nodes holding it)")
			continue
		case wire.VerifyStopped.String():
			fmt.Fprintln(tw, head+"stopped, its data could not be opened: "+p.Error)
			continue
		}
		checked := fmt.Sprintf("%d segment(s), %d record(s), %s checked", p.Segments, p.Records, fmtSize(p.Bytes))
		switch {
		case p.Status == wire.VerifyFailed.String():
			fmt.Fprintf(tw, "%sverification failed after %s: %s\n", head, checked, p.Error)
		case len(p.Damaged) == 0:
			fmt.Fprintf(tw, "%s%s: no damage\n", head, checked)
		default:
			fmt.Fprintf(tw, "%s%s: %d damaged range(s), not served\n", head, checked, len(p.Damaged))
		}
		for _, d := range p.Damaged {
			offsets := fmt.Sprintf("offset %d", d.FirstOffset)
			if d.LastOffset != d.FirstOffset {
				offsets = fmt.Sprintf("offsets %d..%d", d.FirstOffset, d.LastOffset)
			}
			fmt.Fprintf(tw, "  %s: %s bytes %d..%d (%d bytes): %s\n", offsets, d.File, d.Position, d.Position+d.Bytes, d.Bytes, d.Reason)
		}
	}
}

// verifyOutcome is the error `iggo partition verify` exits with: nil
// when every partition held here was checked and has no damage.
func verifyOutcome(v verifyView) error {
	var damaged, broken []string
	held := 0
	for _, p := range v.Partitions {
		switch {
		case p.Status == wire.VerifyNotHeld.String():
			continue
		case p.Status != wire.VerifyChecked.String():
			broken = append(broken, fmt.Sprint(p.Partition))
		case len(p.Damaged) > 0:
			damaged = append(damaged, fmt.Sprint(p.Partition))
		}
		held++
	}
	var msgs []string
	if len(damaged) > 0 {
		msgs = append(msgs, "damage found in partition(s) "+strings.Join(damaged, ", "))
	}
	if len(broken) > 0 {
		msgs = append(msgs, "partition(s) "+strings.Join(broken, ", ")+" could not be verified")
	}
	if held == 0 {
		msgs = append(msgs, "this node holds none of the partitions asked for: nothing was verified")
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("topic %s/%s: %s", v.Stream, v.Topic, strings.Join(msgs, "; "))
}

// partitionVerifyCmd is `iggo partition verify`.
func (a *app) partitionVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify STREAM TOPIC [PARTITION]",
		Short: "Re-verify every stored record of a topic's partitions on this node and report damage",
		Long: `Read and verify every record of the sealed segments (and their index) of
PARTITION, or of every partition of the topic, as stored on the node this
command talks to (VERIFY_PARTITION), without the background scrubber's rate
limit. Prints per partition the segments, records and bytes checked and
either "no damage" or each damaged range: its offsets, the segment file
(relative to the server's data directory), the byte range and what failed.
Damaged records are quarantined: consumers skip them, they are never served.

In a cluster each node verifies its own replicas; a partition this node
holds no replica of is reported as not held. Needs manage_topic on the
topic. The reply comes once everything was read: a finite --timeout is
raised to 5 minutes; use --timeout 0 for very large topics.

Exits 1 when damage was found or a partition could not be verified.`,
		Args: rangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, tid, err := parseTopic(args[0], args[1])
			if err != nil {
				return err
			}
			var part wire.OptPartition
			if len(args) == 3 {
				id, err := parseU32("partition", args[2])
				if err != nil {
					return err
				}
				part = wire.SomePartition(id)
			}
			a.adminTimeout()
			return a.withClient(cmd, func(c *client.Client) error {
				var r *wire.VerifyPartitionReply
				err := a.call(cmd, func(ctx context.Context) (err error) { r, err = c.VerifyPartition(ctx, sid, tid, part); return err })
				if errors.Is(err, wire.ErrInvalidCommand) {
					return wrapf(err, "verify topic %s/%s (the server may not support VERIFY_PARTITION)", sid, tid)
				}
				if err != nil {
					return wrapf(err, "verify topic %s/%s", sid, tid)
				}
				v := newVerifyView(sid, tid, r)
				if err := a.print(cmd, v, func(tw *tabwriter.Writer) { writeVerify(tw, v) }); err != nil {
					return err
				}
				return verifyOutcome(v)
			})
		},
	}
}
