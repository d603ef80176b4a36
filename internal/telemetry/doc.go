// Package telemetry is the server's OpenTelemetry export
// (../shared/design/ops.md §3): logs and traces over OTLP, gRPC or
// HTTP/protobuf per signal, with the service.name and service.version
// resource attributes, built on the official Go SDK.
//
// Beyond the reference, which exports almost no spans, the Provider's
// Observer (a dispatch.Observer) records a span per binary-protocol
// request with the command, stream, topic, partition, status and byte
// counts as attributes. A SEND_MESSAGES request whose messages carry a W3C
// `traceparent` user header continues that trace (the first one is the
// parent, further distinct ones are links), so one message can be
// followed from the producer through the server to the consumer, which
// receives the header unchanged. Root requests are sampled with
// telemetry.traces.sample_ratio; a sampled parent is always honoured.
//
// With telemetry.metrics.endpoint set, Provider.StartMetrics also
// exports the server's Prometheus registry periodically over OTLP through
// the official Prometheus bridge, so the OpenTelemetry metrics are the
// /metrics families themselves (an Iggo addition; off by default).
//
// Nothing here is global: the SDK's global tracer provider, propagator
// and error handler are left alone. Export failures never reach the
// request path; they are logged at most once per Options.ErrorInterval
// with the endpoint and a hint, and the batch is dropped.
//
// When telemetry is disabled New returns a nil *Provider, whose methods
// return nil, and the broker does not install the Observer at all, so the
// request path pays nothing.
package telemetry
