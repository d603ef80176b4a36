package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// parityGauges are the reference's seven state gauges, in exposition
// order, with their HELP text ("total count of <name>.").
var parityGauges = [...]string{"streams", "topics", "partitions", "segments", "messages", "users", "clients"}

// stateCollector turns one Source sample per scrape into the parity
// gauges, connections per transport, per-topic counters and group lag.
type stateCollector struct {
	src    Source
	parity [len(parityGauges)]*prometheus.Desc
	conns  *prometheus.Desc
	msgIn  *prometheus.Desc
	byteIn *prometheus.Desc
	msgOut *prometheus.Desc
	bytOut *prometheus.Desc
	lag    *prometheus.Desc
	damage *prometheus.Desc
}

func newStateCollector(src Source) *stateCollector {
	c := &stateCollector{src: src}
	for i, name := range parityGauges {
		c.parity[i] = prometheus.NewDesc(name, "total count of "+name+".", nil, nil)
	}
	topic := []string{"stream", "topic"}
	c.conns = prometheus.NewDesc("iggo_connections", "Open binary-protocol connections by transport.", []string{"transport"}, nil)
	c.msgIn = prometheus.NewDesc("iggo_topic_messages_in_total", "Messages appended to the topic since its partitions were opened by this process.", topic, nil)
	c.byteIn = prometheus.NewDesc("iggo_topic_bytes_in_total", "Stored batch bytes appended to the topic since its partitions were opened by this process.", topic, nil)
	c.msgOut = prometheus.NewDesc("iggo_topic_messages_out_total", "Messages returned by polls of the topic since its partitions were opened by this process.", topic, nil)
	c.bytOut = prometheus.NewDesc("iggo_topic_bytes_out_total", "Batch bytes returned by polls of the topic since its partitions were opened by this process.", topic, nil)
	c.lag = prometheus.NewDesc("iggo_consumer_group_lag", "Messages of the partition the consumer group has not committed (current offset minus committed offset; all retained messages before its first commit).", []string{"stream", "topic", "group", "partition"}, nil)
	c.damage = prometheus.NewDesc("iggo_storage_damaged_records", "Offsets quarantined now in the partitions held here: records that failed verification and are not served.", nil, nil)
	return c
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.parity {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{c.conns, c.msgIn, c.byteIn, c.msgOut, c.bytOut, c.lag, c.damage} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	var s Sample
	if c.src != nil {
		s = c.src.Sample()
	}
	vals := [len(parityGauges)]uint64{s.Streams, s.Topics, s.Partitions, s.Segments, s.Messages, s.Users, s.Clients}
	for i, d := range c.parity {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(vals[i]))
	}
	// Binary transports only: HTTP API requests run on trusted sessions
	// outside the connection registry.
	for _, name := range transportNames[:4] {
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.Connections[name]), name)
	}
	for _, t := range s.Traffic {
		ch <- prometheus.MustNewConstMetric(c.msgIn, prometheus.CounterValue, float64(t.MessagesIn), t.Stream, t.Topic)
		ch <- prometheus.MustNewConstMetric(c.byteIn, prometheus.CounterValue, float64(t.BytesIn), t.Stream, t.Topic)
		ch <- prometheus.MustNewConstMetric(c.msgOut, prometheus.CounterValue, float64(t.MessagesOut), t.Stream, t.Topic)
		ch <- prometheus.MustNewConstMetric(c.bytOut, prometheus.CounterValue, float64(t.BytesOut), t.Stream, t.Topic)
	}
	for _, l := range s.Lag {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(l.Lag), l.Stream, l.Topic, l.Group, strconv.FormatUint(uint64(l.Partition), 10))
	}
	ch <- prometheus.MustNewConstMetric(c.damage, prometheus.GaugeValue, float64(s.DamagedRecords))
}
