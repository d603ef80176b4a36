package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// Batching of `iggo send`: a batch is sent when it holds this many
// messages or bytes, or when the input has no further complete line
// ready (so interactive input is sent line by line).
const (
	sendBatchMessages = 1000
	sendBatchBytes    = 1 << 20
	// sendReadBuffer is the line reader's buffer; lines may be longer.
	sendReadBuffer = 1 << 20
)

type sendFlags struct {
	partition uint32
	key       string
	headers   []string
	raw       bool
	file      string
}

// sendStats sums what was sent, per partition.
type sendStats struct {
	messages int
	batches  int
	parts    map[uint32]*partitionRange
}

type partitionRange struct {
	Partition   uint32 `json:"partition"`
	Messages    int    `json:"messages"`
	FirstOffset uint64 `json:"first_offset"`
	LastOffset  uint64 `json:"last_offset"`
}

func (a *app) sendCmd() *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send STREAM TOPIC [MESSAGE...]",
		Short: "Send messages: the arguments, or standard input / a file one message per line",
		Long: `Send messages to a topic. Each MESSAGE argument is one message. Without
arguments the input (standard input, or --file) is read: one message per line
(the line end is removed, empty lines are skipped), or with --raw the whole
input as one message. Lines are sent in batches as they arrive.

The partition is chosen by the server (round robin) unless --partition or
--key (hashed: the same key always lands on the same partition) is given.
--header KEY=VALUE adds a String header to every message; KEY:KIND=VALUE
gives another kind (bool, int8..int64, uint8..uint64, float32, float64, raw
as hex).`,
		Example: `  iggo send orders events 'hello' 'world'
  iggo send orders events --key customer-42 --header source=web '{"total": 10}'
  tail -f app.log | iggo send logs app
  iggo send blobs images --raw --file photo.jpg`,
		Args:              rangeArgs(2, -1),
		RunE:              func(cmd *cobra.Command, args []string) error { return a.runSend(cmd, args, &f) },
		ValidArgsFunction: a.completeArgs(argStream, argTopic),
	}
	fs := cmd.Flags()
	fs.Uint32VarP(&f.partition, "partition", "p", 0, "send to this partition id")
	fs.StringVarP(&f.key, "key", "k", "", "partition by this message key (1..255 bytes)")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "user header KEY=VALUE or KEY:KIND=VALUE on every message; repeatable")
	fs.BoolVar(&f.raw, "raw", false, "send the whole input as one message instead of one per line")
	fs.StringVarP(&f.file, "file", "f", "", "read the input from this file instead of standard input (- is standard input)")
	return a.clientCommand(cmd)
}

func (a *app) runSend(cmd *cobra.Command, args []string, f *sendFlags) error {
	sid, tid, err := parseTopic(args[0], args[1])
	if err != nil {
		return err
	}
	fl := cmd.Flags()
	part := wire.BalancedPartitioning()
	switch {
	case fl.Changed("partition") && fl.Changed("key"):
		return usagef("--partition and --key exclude each other")
	case fl.Changed("partition"):
		part = wire.PartitioningByID(f.partition)
	case fl.Changed("key"):
		if len(f.key) == 0 || len(f.key) > wire.MaxHeaderFieldLen {
			return usagef("--key: 1..255 bytes")
		}
		part = wire.PartitioningByKey([]byte(f.key))
	}
	var hs wire.UserHeaders
	for _, h := range f.headers {
		uh, err := parseHeader(h)
		if err != nil {
			return err
		}
		hs = append(hs, uh)
	}
	if err := hs.Validate(); err != nil {
		return usagef("--header: %v", err)
	}
	var headers []byte
	if len(hs) > 0 {
		headers = hs.AppendTo(nil)
	}
	msgs := args[2:]
	if len(msgs) > 0 && (f.raw || fl.Changed("file")) {
		return usagef("MESSAGE arguments exclude --raw and --file (they read the input)")
	}
	for i, m := range msgs {
		if m == "" {
			return usagef("message %d is empty", i+1)
		}
	}
	var in io.Reader
	if len(msgs) == 0 {
		in = cmd.InOrStdin()
		if f.file != "" && f.file != "-" {
			file, err := os.Open(f.file)
			if err != nil {
				return usagef("--file: %v", err)
			}
			defer file.Close()
			in = file
		}
	}
	js, err := a.jsonOutput()
	if err != nil {
		return err
	}
	c, err := a.dial(cmd, true)
	if err != nil {
		return err
	}
	defer c.Close()
	st := &sendStats{parts: map[uint32]*partitionRange{}}
	send := func(batch []wire.Message) error {
		if len(batch) == 0 {
			return nil
		}
		var confs []wire.SendConfirmation
		if err := a.call(cmd, func(ctx context.Context) (err error) {
			confs, err = c.SendMessages(ctx, sid, tid, part, batch)
			if errors.Is(err, wire.ErrResourceNotFound) {
				err = diagnoseTarget(ctx, c, sid, tid, part, err)
			}
			return err
		}); err != nil {
			return wrapf(err, "send to %s/%s", sid, tid)
		}
		st.add(batch, confs)
		return nil
	}
	switch {
	case len(msgs) > 0:
		batch := make([]wire.Message, 0, min(len(msgs), sendBatchMessages))
		size := 0
		for _, m := range msgs {
			batch = append(batch, wire.Message{Payload: []byte(m), UserHeaders: headers})
			size += len(m)
			if len(batch) == sendBatchMessages || size >= sendBatchBytes {
				if err := send(batch); err != nil {
					return err
				}
				batch, size = batch[:0], 0
			}
		}
		err = send(batch)
	case f.raw:
		err = sendRaw(in, headers, send)
	default:
		err = sendLines(in, headers, send)
	}
	if err != nil {
		return err
	}
	return a.printSent(cmd, js, sid, tid, st)
}

// diagnoseTarget replaces the server's generic ResourceNotFound (20),
// its answer to a send whose stream, topic or partition does not resolve
// (the reference's rule; docs/DESIGN.md, "Reference parity"), with the
// precise error: the missing stream, the missing topic, or, for a send to
// a partition id the topic lacks, PartitionNotFound.
func diagnoseTarget(ctx context.Context, c *client.Client, sid, tid wire.Identifier, part wire.Partitioning, err error) error {
	if _, serr := c.GetStream(ctx, sid); errors.Is(serr, wire.ErrStreamIDNotFound) {
		return serr
	}
	t, terr := c.GetTopic(ctx, sid, tid)
	if errors.Is(terr, wire.ErrTopicIDNotFound) {
		return terr
	}
	if terr == nil && part.Kind == wire.PartitionByID && part.PartitionID >= t.PartitionsCount {
		return fmt.Errorf("%w: topic %s has %d partitions", wire.ErrPartitionNotFound, tid, t.PartitionsCount)
	}
	return err
}

// sendRaw sends the whole input as one message.
func sendRaw(in io.Reader, headers []byte, send func([]wire.Message) error) error {
	data, err := io.ReadAll(io.LimitReader(in, wire.MaxPayloadSize+1))
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	if len(data) > wire.MaxPayloadSize {
		return usagef("input is larger than the %d-byte message limit", wire.MaxPayloadSize)
	}
	if len(data) == 0 {
		return usagef("the input is empty: nothing to send")
	}
	return send([]wire.Message{{Payload: data, UserHeaders: headers}})
}

// sendLines sends each non-empty line as a message, batching lines that
// are already buffered and sending whenever the input pauses.
func sendLines(in io.Reader, headers []byte, send func([]wire.Message) error) error {
	br := bufio.NewReaderSize(in, sendReadBuffer)
	var batch []wire.Message
	size := 0
	flush := func() error {
		err := send(batch)
		batch, size = batch[:0], 0
		return err
	}
	for {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read input: %w", err)
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
		if len(line) > wire.MaxPayloadSize {
			return fmt.Errorf("a line is longer than the %d-byte message limit", wire.MaxPayloadSize)
		}
		if len(line) > 0 {
			batch = append(batch, wire.Message{Payload: line, UserHeaders: headers})
			size += len(line)
		}
		if errors.Is(err, io.EOF) {
			return flush()
		}
		if len(batch) >= sendBatchMessages || size >= sendBatchBytes || !lineBuffered(br) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// lineBuffered reports whether a complete line is already buffered, so
// reading it will not wait for input.
func lineBuffered(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// add records a sent batch: the server confirms the first offset per
// partition written (none for a batch it recognized as a retry).
func (s *sendStats) add(batch []wire.Message, confs []wire.SendConfirmation) {
	s.messages += len(batch)
	s.batches++
	for _, c := range confs {
		last := c.BaseOffset + uint64(len(batch)) - 1
		r, ok := s.parts[c.PartitionID]
		if !ok {
			s.parts[c.PartitionID] = &partitionRange{Partition: c.PartitionID, Messages: len(batch), FirstOffset: c.BaseOffset, LastOffset: last}
			continue
		}
		r.Messages += len(batch)
		r.FirstOffset = min(r.FirstOffset, c.BaseOffset)
		r.LastOffset = max(r.LastOffset, last)
	}
}

func (a *app) printSent(cmd *cobra.Command, js bool, sid, tid wire.Identifier, st *sendStats) error {
	ranges := make([]*partitionRange, 0, len(st.parts))
	for _, r := range st.parts {
		ranges = append(ranges, r)
	}
	slices.SortFunc(ranges, func(x, y *partitionRange) int { return cmp.Compare(x.Partition, y.Partition) })
	v := struct {
		Stream     string            `json:"stream"`
		Topic      string            `json:"topic"`
		Messages   int               `json:"messages"`
		Batches    int               `json:"batches"`
		Partitions []*partitionRange `json:"partitions"`
	}{sid.String(), tid.String(), st.messages, st.batches, ranges}
	if !js && st.messages == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "nothing sent: the input holds no messages")
		return nil
	}
	return a.print(cmd, v, func(tw *tabwriter.Writer) {
		var where []string
		for _, r := range ranges {
			offs := fmt.Sprintf("offset %d", r.FirstOffset)
			if r.LastOffset != r.FirstOffset {
				offs = fmt.Sprintf("offsets %d-%d", r.FirstOffset, r.LastOffset)
			}
			where = append(where, fmt.Sprintf("partition %d %s", r.Partition, offs))
		}
		s := fmt.Sprintf("sent %d message(s) to %s/%s", st.messages, sid, tid)
		if len(where) > 0 {
			s += ": " + strings.Join(where, ", ")
		}
		fmt.Fprintln(tw, s)
	})
}
