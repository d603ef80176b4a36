package telemetry

import (
	"context"
	"encoding/binary"
	"strings"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/metrics"
	"github.com/iggo-dev/iggo/wire"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span attribute keys. The messaging.* keys follow the OpenTelemetry
// messaging conventions; iggy.* are the server's own.
const (
	AttrCommand      = "iggy.command"
	AttrTransport    = "iggy.transport"
	AttrStatus       = "iggy.status"
	AttrEvicted      = "iggy.evicted"
	AttrStream       = "iggy.stream"
	AttrTopic        = "iggy.topic"
	AttrPartition    = "iggy.partition"
	AttrRequestBytes = "iggy.request.bytes"
	AttrReplyBytes   = "iggy.reply.bytes"
	AttrMessages     = "iggy.messages"
	AttrOffset       = "iggy.offset"
	AttrConsumer     = "iggy.consumer"
	AttrSystem       = "messaging.system"
	AttrOperation    = "messaging.operation.name"
	AttrDestination  = "messaging.destination.name"
)

// Limits of the traceparent scan of one SEND_MESSAGES batch.
const (
	// maxScannedMessages bounds how many messages are looked at.
	maxScannedMessages = 64
	// maxLinks bounds the links to further producer traces.
	maxLinks = 16
)

// spanObserver records one span per served request (dispatch.Observer).
// It runs after the answer is decided, with the request and in-memory
// reply bodies still valid, and backdates the span to the request start.
type spanObserver struct {
	tracer trace.Tracer
}

// Observe implements dispatch.Observer.
func (s *spanObserver) Observe(o dispatch.Observation) {
	ctx := context.Background()
	info, known := wire.LookupCommand(o.Code)
	name := "unknown"
	if known {
		name = strings.ToLower(info.Name)
	}
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs,
		attribute.String(AttrSystem, "iggy"),
		attribute.String(AttrCommand, name),
		attribute.String(AttrTransport, metrics.TransportName(o.Transport)),
		attribute.Int64(AttrStatus, int64(o.Status)),
		attribute.Int(AttrRequestBytes, o.RequestBytes),
		attribute.Int(AttrReplyBytes, o.ReplyBytes),
	)
	var links []trace.Link
	switch o.Code {
	case wire.CmdSendMessages:
		var parent trace.SpanContext
		attrs, parent, links = sendAttributes(attrs, o)
		if parent.IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
		}
	case wire.CmdPollMessages:
		attrs = pollAttributes(attrs, o)
	}
	if o.Evicted {
		attrs = append(attrs, attribute.Bool(AttrEvicted, true))
	}
	_, span := s.tracer.Start(ctx, name,
		trace.WithTimestamp(o.Start),
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrs...),
		trace.WithLinks(links...),
	)
	if o.Status != 0 || o.Evicted {
		desc := "evicted"
		if !o.Evicted {
			desc = errorName(o.Status)
		}
		span.SetStatus(codes.Error, desc)
	}
	span.End(trace.WithTimestamp(o.Start.Add(o.Duration)))
}

// errorName names an IggyError code for a span status.
func errorName(code uint32) string {
	if e, ok := wire.ErrorForCode(code).(*wire.Error); ok && e != nil {
		return e.Name
	}
	return "error"
}

// sendAttributes decodes a SEND_MESSAGES request (and its reply) into
// attributes and finds the producer's trace context in the messages'
// traceparent user headers.
func sendAttributes(attrs []attribute.KeyValue, o dispatch.Observation) ([]attribute.KeyValue, trace.SpanContext, []trace.Link) {
	attrs = append(attrs, attribute.String(AttrOperation, "send"))
	var req wire.SendMessages
	if err := req.DecodeMetadata(o.Body); err != nil {
		return attrs, trace.SpanContext{}, nil
	}
	attrs = append(attrs,
		attribute.String(AttrStream, req.StreamID.String()),
		attribute.String(AttrTopic, req.TopicID.String()),
		attribute.String(AttrDestination, req.StreamID.String()+"/"+req.TopicID.String()),
		attribute.Int64(AttrMessages, int64(req.MessagesCount)),
	)
	// Reply: [1 u32][stream u32][topic u32][partition u32][base offset u64].
	if o.Status == 0 && len(o.Reply) >= 24 && binary.LittleEndian.Uint32(o.Reply) == 1 {
		attrs = append(attrs,
			attribute.Int64(AttrPartition, int64(binary.LittleEndian.Uint32(o.Reply[12:]))),
			attribute.Int64(AttrOffset, int64(binary.LittleEndian.Uint64(o.Reply[16:]))),
		)
	} else if req.Partitioning.Kind == wire.PartitionByID {
		attrs = append(attrs, attribute.Int64(AttrPartition, int64(req.Partitioning.PartitionID)))
	}
	parent, links := traceContexts(req.Batch)
	return attrs, parent, links
}

// pollAttributes decodes a POLL_MESSAGES request and its reply head.
func pollAttributes(attrs []attribute.KeyValue, o dispatch.Observation) []attribute.KeyValue {
	attrs = append(attrs, attribute.String(AttrOperation, "poll"))
	var req wire.PollMessages
	if err := req.Decode(o.Body); err != nil {
		return attrs
	}
	attrs = append(attrs,
		attribute.String(AttrStream, req.StreamID.String()),
		attribute.String(AttrTopic, req.TopicID.String()),
		attribute.String(AttrDestination, req.StreamID.String()+"/"+req.TopicID.String()),
		attribute.String(AttrConsumer, req.Consumer.ID.String()),
	)
	// Reply head: [partition u32][current offset u64][count u32].
	if o.Status == 0 && len(o.Reply) >= wire.PollReplyHeadSize {
		attrs = append(attrs,
			attribute.Int64(AttrPartition, int64(binary.LittleEndian.Uint32(o.Reply))),
			attribute.Int64(AttrMessages, int64(binary.LittleEndian.Uint32(o.Reply[12:]))),
		)
	} else if req.Partition.Present {
		attrs = append(attrs, attribute.Int64(AttrPartition, int64(req.Partition.ID)))
	}
	return attrs
}
