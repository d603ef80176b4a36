package itest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// Where a partition's bytes are with tiered storage: PARTITION_TIERS, the
// HTTP API's topic document and the iggo_tier_* families of /metrics
// (docs/OPERATIONS.md, "Tiered storage").

// tierKeys are the tier fields of a partition in the HTTP topic document.
var tierKeys = []string{"local_size_bytes", "remote_size_bytes", "remote_only_size_bytes", "pending_size_bytes",
	"remote_segments_count", "pending_segments_count"}

// httpTopicPartitions is GET topic's partitions, numbers as json.Number.
func httpTopicPartitions(t *testing.T, api *httpAPI, stream, topic uint32) []map[string]any {
	t.Helper()
	var doc struct {
		Partitions []map[string]any `json:"partitions"`
	}
	api.ok(200, &doc, "GET", fmt.Sprintf("/streams/%d/topics/%d", stream, topic), nil)
	return doc.Partitions
}

func TestTopicTiersUploaded(t *testing.T) {
	s, api := startHTTP(t, WithTieredStorage(t))
	c := obsClient(t, s)
	stream, topic := scrubFixture(t, c)
	sid, tid := wire.NumericID(stream), wire.NumericID(topic)

	// Local retention is 0: once uploaded, the sealed segments of
	// partition 1 are only in the bucket.
	var tiers []wire.PartitionTiers
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		tiers, err = c.PartitionTiers(obsCtx(t), sid, tid)
		if err != nil {
			t.Fatal(err)
		}
		if len(tiers) != 2 || tiers[0].PartitionID != 0 || tiers[1].PartitionID != 1 {
			t.Fatalf("tiers %+v, want partitions 0 and 1", tiers)
		}
		p := tiers[1]
		if p.PendingSegments == 0 && p.RemoteSegments >= 2 && p.RemoteOnlyBytes == p.RemoteBytes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 1 not uploaded and dropped: %+v", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d, err := c.GetTopic(obsCtx(t), sid, tid)
	if err != nil {
		t.Fatal(err)
	}
	var local, remote, remoteOnly uint64
	for i, p := range tiers {
		if got := p.TotalBytes(); got != d.Partitions[i].SizeBytes {
			t.Errorf("partition %d: local %d + remote only %d = %d, GET_TOPIC size %d", p.PartitionID, p.LocalBytes, p.RemoteOnlyBytes, got, d.Partitions[i].SizeBytes)
		}
		local, remote, remoteOnly = local+p.LocalBytes, remote+p.RemoteBytes, remoteOnly+p.RemoteOnlyBytes
	}
	if p := tiers[1]; p.LocalBytes == 0 || p.LocalBytes >= p.RemoteBytes || p.PendingBytes != 0 {
		t.Fatalf("partition 1 %+v: want the active segment local and the rest remote", p)
	}
	if p := tiers[0]; p.LocalBytes == 0 || p.RemoteBytes != 0 || p.RemoteSegments != 0 {
		t.Fatalf("partition 0 %+v: its one segment is active, so local", p)
	}

	// The HTTP document carries the same figures.
	ps := httpTopicPartitions(t, api, stream, topic)
	for i, p := range tiers {
		want := map[string]uint64{"local_size_bytes": p.LocalBytes, "remote_size_bytes": p.RemoteBytes,
			"remote_only_size_bytes": p.RemoteOnlyBytes, "pending_size_bytes": p.PendingBytes,
			"remote_segments_count": uint64(p.RemoteSegments), "pending_segments_count": uint64(p.PendingSegments)}
		for k, w := range want {
			if got := num(t, ps[i][k]); got != w {
				t.Errorf("HTTP partition %d %s = %d, want %d", p.PartitionID, k, got, w)
			}
		}
	}

	// /metrics: the gauges sum the partitions, the counters saw the
	// uploads and the drops (counted once each is done).
	n := float64(tiers[1].RemoteSegments)
	fams := scrapeMetrics(t, s)
	waitFor(t, "the upload and drop counters", func() bool {
		fams = scrapeMetrics(t, s)
		up, _ := sample(fams, "iggo_tier_uploaded_segments_total")
		dropped, _ := sample(fams, "iggo_tier_local_dropped_segments_total")
		return up >= n && dropped >= n
	})
	for name, want := range map[string]float64{
		"iggo_tier_local_bytes": float64(local), "iggo_tier_remote_bytes": float64(remote),
		"iggo_tier_remote_only_bytes": float64(remoteOnly), "iggo_tier_pending_segments": 0, "iggo_tier_pending_bytes": 0,
		"iggo_tier_remote_segments": float64(tiers[1].RemoteSegments),
	} {
		if got := mustSample(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := mustSample(t, fams, "iggo_tier_upload_duration_seconds"); got < n {
		t.Errorf("upload latency samples %v, want at least %v", got, n)
	}
	if got := mustSample(t, fams, "iggo_tier_uploaded_bytes_total"); got < float64(tiers[1].RemoteBytes) {
		t.Errorf("uploaded bytes %v, want at least %d", got, tiers[1].RemoteBytes)
	}
	for _, name := range []string{"iggo_tier_failures_total", "iggo_tier_remote_read_errors_total", "iggo_tier_fetch_duration_seconds", "iggo_tier_cache_bytes"} {
		mustSample(t, fams, name)
	}
}

func TestTopicTiersOff(t *testing.T) {
	s, api := startHTTP(t)
	c := obsClient(t, s)
	ctx := obsCtx(t)
	st, err := c.CreateStream(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := c.CreateTopic(ctx, wire.NumericID(st.ID), "t", 2)
	if err != nil {
		t.Fatal(err)
	}
	sid, tid := wire.NumericID(st.ID), wire.NumericID(tp.ID)
	if tiers, err := c.PartitionTiers(ctx, sid, tid); err != nil || len(tiers) != 0 {
		t.Fatalf("tiers with tiered storage off: %+v %v", tiers, err)
	}
	ps := httpTopicPartitions(t, api, st.ID, tp.ID)
	if len(ps) != 2 {
		t.Fatalf("HTTP partitions %v", ps)
	}
	for _, p := range ps {
		for _, k := range tierKeys {
			if _, ok := p[k]; ok {
				t.Fatalf("HTTP partition %v has %s with tiered storage off", p["id"], k)
			}
		}
	}
	for name := range scrapeMetrics(t, s) {
		if strings.HasPrefix(name, "iggo_tier_") {
			t.Fatalf("%s exported with tiered storage off", name)
		}
	}

	// Errors: unknown stream and topic, a user without read_topic.
	if _, err := c.PartitionTiers(ctx, wire.NamedID("nope"), tid); !errors.Is(err, wire.ErrStreamIDNotFound) {
		t.Fatalf("unknown stream: %v", err)
	}
	if _, err := c.PartitionTiers(ctx, sid, wire.NamedID("nope")); !errors.Is(err, wire.ErrTopicIDNotFound) {
		t.Fatalf("unknown topic: %v", err)
	}
	for _, u := range []struct {
		name  string
		perms *wire.Permissions
		ok    bool
	}{
		{"sender", &wire.Permissions{Global: wire.GlobalPermissions{SendMessages: true}}, false},
		{"reader", &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st.ID,
			Topics: []wire.TopicPermissions{{TopicID: tp.ID, ReadTopic: true}}}}}, true},
	} {
		if _, err := c.CreateUser(ctx, u.name, u.name+"-pass", wire.UserActive, u.perms); err != nil {
			t.Fatal(err)
		}
		uc, err := client.Dial(ctx, s.Addr, client.WithCredentials(u.name, u.name+"-pass"))
		if err != nil {
			t.Fatal(err)
		}
		_, terr := uc.GetTopic(ctx, sid, tid)
		_, err = uc.PartitionTiers(ctx, sid, tid)
		uc.Close()
		if u.ok && (err != nil || terr != nil) || !u.ok && (!errors.Is(err, wire.ErrUnauthorized) || !errors.Is(terr, wire.ErrUnauthorized)) {
			t.Fatalf("%s: PARTITION_TIERS %v, GET_TOPIC %v: want both allowed: %v", u.name, err, terr, u.ok)
		}
	}
}
