// Package bench is `iggo bench`: throughput and latency benchmarks of a
// server speaking the Iggy binary protocol 0.11.0, with the scenarios and
// parameter names of iggy-bench so figures compare.
//
// Every producer and consumer is its own connection (client.Dial) and
// uses the low-level calls: SendBatch with one batch of MessagesPerBatch
// messages at a time (the next batch goes out when the reply arrived, as
// iggy-bench does), PollMessages of MessagesPerBatch messages. Nothing is
// pipelined, so a figure measures the server's round trip and not
// client-side batching. Each producer (and the fill) encodes its batch
// once and sends it again and again, re-stamping only the batch header's
// origin timestamp and checksum (see batchSource), so the client does no
// per-message work.
//
// Run drives one benchmark: an optional loopback TCP baseline
// (MeasureLoopback) and disk baseline (MeasureDisk), an embedded broker
// when no address is given, the
// streams PREFIX-1..N with one topic each, an unmeasured fill for the
// consume-only scenarios, a warmup whose batches are not measured, then
// the measured phase with a sampled throughput series per actor and a
// latency Histogram per actor. The Result holds per-actor and per-kind
// figures and the accounting Check (confirmed = stored = received); it is
// written as JSON and as a self-contained HTML chart (WriteHTML), and
// WriteReport prints the summary table. When the broker runs on this
// machine the Result also has its CPU time during the measured phase and
// samples of its process over time (resources.go). RunScale is `iggo
// bench scale`: many partitions, many idle clients, the idle broker.
//
// Consumers poll with client.PollMessagesBuffer, so neither side of a
// figure allocates per batch.
//
// Choices where iggy-bench leaves room or does something else:
//   - MB is 10^6 bytes of payload; wire bytes (batch and message headers
//     included) are in the result file too.
//   - Message ids are fixed per position in the batch and repeat from
//     batch to batch (the broker does not deduplicate by id); all
//     messages of a batch share one origin timestamp, the send time.
//   - Latency is per batch; every message of a batch shares it. Consumers
//     that run next to producers, and producing consumers, also record
//     each message's age at receipt (receive time − origin timestamp).
//   - The warmup is time-based: batches started before it ends are not
//     measured; in count mode producers then send --message-batches
//     measured batches. Consumers next to producers read everything,
//     warmup included. Consumers of a pre-filled stream re-read the fill
//     during the warmup, then read it once, measured.
//   - --rate-limit is the total payload rate over all producers (over all
//     consumers when there are none), split evenly between actors.
//   - --total-data is split evenly between the actors, rounded up to
//     whole batches.
package bench
