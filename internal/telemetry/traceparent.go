package telemetry

import (
	"bytes"
	"context"

	"github.com/iggo-dev/iggo/wire"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Header keys of the W3C trace context a producer puts in a message's
// user headers (string or raw key and value; the key is matched without
// regard to case, like an HTTP header name).
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// traceContexts scans the first messages of a batch for traceparent user
// headers: the first valid one is the parent, further distinct ones are
// links (a batch may carry messages of several producer traces).
func traceContexts(batch []byte) (parent trace.SpanContext, links []trace.Link) {
	v, _, err := wire.ParseBatch(batch)
	if err != nil {
		return trace.SpanContext{}, nil
	}
	it := v.Messages()
	for i := 0; i < maxScannedMessages; i++ {
		m, ok := it.Next()
		if !ok {
			break
		}
		sc := messageTraceContext(m.UserHeaders())
		if !sc.IsValid() {
			continue
		}
		switch {
		case !parent.IsValid():
			parent = sc
		case sc.TraceID() != parent.TraceID() && len(links) < maxLinks && !linked(links, sc):
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	return parent, links
}

func linked(links []trace.Link, sc trace.SpanContext) bool {
	for _, l := range links {
		if l.SpanContext.TraceID() == sc.TraceID() {
			return true
		}
	}
	return false
}

// messageTraceContext extracts the W3C trace context from one message's
// user-headers block (invalid when there is none).
func messageTraceContext(block []byte) trace.SpanContext {
	if len(block) == 0 {
		return trace.SpanContext{}
	}
	var c carrier
	it := wire.IterUserHeaders(block)
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		switch {
		case textField(p.Key) && bytes.EqualFold(p.Key.Data, []byte(HeaderTraceParent)) && textField(p.Value):
			c.parent = string(p.Value.Data)
		case textField(p.Key) && bytes.EqualFold(p.Key.Data, []byte(HeaderTraceState)) && textField(p.Value):
			c.state = string(p.Value.Data)
		}
	}
	if c.parent == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), c)
	return trace.SpanContextFromContext(ctx)
}

func textField(f wire.HeaderField) bool {
	return f.Kind == wire.HeaderString || f.Kind == wire.HeaderRaw
}

// carrier is a propagation.TextMapCarrier over the two trace headers.
type carrier struct{ parent, state string }

// Get implements propagation.TextMapCarrier.
func (c carrier) Get(key string) string {
	switch key {
	case HeaderTraceParent:
		return c.parent
	case HeaderTraceState:
		return c.state
	}
	return ""
}

// Set implements propagation.TextMapCarrier (extraction only: ignored).
func (c carrier) Set(string, string) {}

// Keys implements propagation.TextMapCarrier.
func (c carrier) Keys() []string { return []string{HeaderTraceParent, HeaderTraceState} }

// TraceParentHeaders returns user headers carrying sc as W3C trace
// context, for a producer that wants its message traced through the
// server (what the server reads back in traceContexts).
func TraceParentHeaders(sc trace.SpanContext) wire.UserHeaders {
	m := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), m)
	out := wire.UserHeaders{{Key: wire.StringHeader(HeaderTraceParent), Value: wire.StringHeader(m[HeaderTraceParent])}}
	if s := m[HeaderTraceState]; s != "" {
		out = append(out, wire.UserHeader{Key: wire.StringHeader(HeaderTraceState), Value: wire.StringHeader(s)})
	}
	return out
}
