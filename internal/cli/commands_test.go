package cli

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
)

func TestStreamCommands(t *testing.T) {
	e := newCLI(t)
	wantLines(t, e.ok("stream", "create", "orders"), `stream "orders" created with id 0`)
	var created streamView
	e.okJSON(&created, "stream", "create", "payments")
	if created.ID != 1 || created.Name != "payments" || created.CreatedAt.IsZero() {
		t.Fatalf("create -o json = %+v", created)
	}
	e.run("stream", "create", "orders").wantError(t, ExitError, "create stream orders", "StreamNameAlreadyExists (error 1012)")
	e.run("stream", "create", "2024").wantError(t, ExitUsage, "all-digit")

	out := e.ok("stream", "list")
	wantLines(t, out, "ID", "NAME", "orders", "payments")
	var list []streamView
	e.okJSON(&list, "stream", "list")
	if got := []string{list[0].Name, list[1].Name}; !cmp.Equal(got, []string{"orders", "payments"}) {
		t.Fatalf("stream list names %v", got)
	}
	// Field names of the JSON output are part of the CLI's contract.
	var raw []map[string]any
	e.okJSON(&raw, "stream", "list")
	for _, k := range []string{"id", "name", "created_at", "topics_count", "messages_count", "size_bytes"} {
		if _, ok := raw[0][k]; !ok {
			t.Fatalf("stream list JSON lacks %q: %v", k, raw[0])
		}
	}

	e.ok("topic", "create", "orders", "events", "2")
	for _, id := range []string{"orders", "0"} {
		var s streamView
		e.okJSON(&s, "stream", "get", id)
		if s.ID != 0 || s.Name != "orders" || len(s.Topics) != 1 || s.Topics[0].Name != "events" {
			t.Fatalf("stream get %s = %+v", id, s)
		}
	}
	wantLines(t, e.ok("stream", "get", "orders"), "Name:", "orders", "events")

	wantLines(t, e.ok("stream", "update", "payments", "billing"), `renamed to "billing"`)
	e.ok("stream", "get", "billing")
	e.ok("send", "orders", "events", "--partition", "0", "m1", "m2")
	wantLines(t, e.ok("stream", "purge", "orders"), "stream orders purged")
	var s streamView
	e.okJSON(&s, "stream", "get", "orders")
	if s.MessagesCount != 0 {
		t.Fatalf("after purge the stream holds %d messages", s.MessagesCount)
	}
	wantLines(t, e.ok("stream", "delete", "1"), "stream 1 deleted")
	e.run("stream", "get", "billing").wantError(t, ExitError, "get stream billing", "StreamIdNotFound (error 1009)")
	e.run("stream", "delete", "billing").wantError(t, ExitError, "StreamIdNotFound")
	e.run("stream", "get").wantError(t, ExitUsage, "want 1 argument(s), got 0")
	e.run("stream").wantCode(t, ExitOK) // help
	e.run("stream", "frobnicate").wantError(t, ExitUsage, `unknown command "frobnicate"`)
}

func TestTopicCommands(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "orders")
	out := e.ok("topic", "create", "orders", "events", "3")
	wantLines(t, out, `topic "events" created in stream orders with id 0 and 3 partition(s)`)

	var tv topicView
	e.okJSON(&tv, "topic", "create", "orders", "audit", "1",
		"--message-expiry", "7d", "--max-topic-size", "1GiB", "--segment-size", "16MiB",
		"--enforce-fsync", "--compression", "gzip")
	week := uint64(7 * 24 * 3600 * 1_000_000)
	if tv.MessageExpiryMicros == nil || *tv.MessageExpiryMicros != week || tv.MaxTopicSize == nil || *tv.MaxTopicSize != 1<<30 ||
		tv.CompressionAlgorithm != "gzip" || tv.Options["segment_size"] != float64(16<<20) || tv.Options["enforce_fsync"] != true {
		t.Fatalf("topic create with options = %+v", tv)
	}
	var one topicView
	e.okJSON(&one, "topic", "create", "orders", "single") // PARTITIONS defaults to 1
	if one.PartitionsCount != 1 || one.MessageExpiryMicros != nil || one.MaxTopicSize != nil {
		t.Fatalf("default topic = %+v", one)
	}

	var got topicView
	e.okJSON(&got, "topic", "get", "orders", "events")
	if got.Name != "events" || got.PartitionsCount != 3 || len(got.Partitions) != 3 || got.Partitions[2].ID != 2 {
		t.Fatalf("topic get = %+v", got)
	}
	wantLines(t, e.ok("topic", "get", "0", "1"), "Message expiry:", "7d", "Max topic size:", "1 GiB", "segment_size", "16 MiB", "explicit")

	var list []topicView
	e.okJSON(&list, "topic", "list", "orders")
	if len(list) != 3 {
		t.Fatalf("topic list = %+v", list)
	}
	wantLines(t, e.ok("topic", "list", "orders"), "events", "audit", "single", "never", "unlimited")

	e.ok("topic", "update", "orders", "audit", "--message-expiry", "never", "--max-topic-size", "2GiB")
	e.okJSON(&got, "topic", "get", "orders", "audit")
	if got.MessageExpiryMicros != nil || got.MaxTopicSize == nil || *got.MaxTopicSize != 2<<30 || got.Name != "audit" {
		t.Fatalf("after update: %+v", got)
	}
	e.ok("topic", "update", "orders", "audit", "--name", "audit-log", "--compression", "none")
	e.okJSON(&got, "topic", "get", "orders", "audit-log")
	if got.CompressionAlgorithm != "none" {
		t.Fatalf("after rename: %+v", got)
	}
	e.run("topic", "update", "orders", "audit-log").wantError(t, ExitUsage, "nothing to change")
	e.ok("topic", "update", "orders", "audit-log", "--local-retention-size", "10GiB", "--local-retention-age", "2d")
	var lr topicView
	e.okJSON(&lr, "topic", "get", "orders", "audit-log")
	if lr.Options["local_retention_size"] != float64(10<<30) || lr.Options["local_retention_age"] != float64(2*24*3600*1_000_000) {
		t.Fatalf("after local retention update: %+v", lr.Options)
	}
	wantLines(t, e.ok("topic", "get", "orders", "audit-log"), "local_retention_size", "10 GiB", "local_retention_age", "2d")
	e.ok("topic", "update", "orders", "audit-log", "--local-retention-size", "keep-all", "--option", "local_retention_age=never")
	wantLines(t, e.ok("topic", "get", "orders", "audit-log"), "keep all", "never")
	e.ok("topic", "update", "orders", "audit-log", "--local-retention-size", "default", "--local-retention-age", "default")
	e.okJSON(&lr, "topic", "get", "orders", "audit-log")
	if lr.Options["local_retention_size"] != float64(0) || lr.Options["local_retention_age"] != float64(0) {
		t.Fatalf("after local retention reset: %+v", lr.Options)
	}
	e.run("topic", "update", "orders", "audit-log", "--local-retention-size", "lots").wantError(t, ExitUsage, "--local-retention-size")
	e.run("topic", "update", "orders", "audit-log", "--local-retention-age", "soon").wantError(t, ExitUsage, "--local-retention-age")
	e.run("topic", "update", "orders", "audit-log", "--option", "segment_size=2MiB").wantError(t, ExitError, "UnsupportedOptionKey (error 4041)")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad expiry", []string{"--message-expiry", "soon"}, ExitUsage, "--message-expiry"},
		{"bad size", []string{"--max-topic-size", "big"}, ExitUsage, "--max-topic-size"},
		{"bad compression", []string{"--compression", "lz4"}, ExitUsage, "--compression"},
		{"segment not a multiple of 512", []string{"--segment-size", "1000000"}, ExitError, "InvalidOptionValue (error 4042)"},
		{"max size below segment", []string{"--segment-size", "16MiB", "--max-topic-size", "1MiB"}, ExitError, "InvalidTopicSize (error 1019)"},
		{"unknown option", []string{"--option", "colour=blue"}, ExitError, "UnsupportedOptionKey (error 4041)"},
		{"bad partitions", []string{"many"}, ExitUsage, "partitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.run(append([]string{"topic", "create", "orders", "x"}, tc.args...)...).wantError(t, tc.code, tc.want)
		})
	}
	e.run("topic", "list", "nope").wantError(t, ExitError, "StreamIdNotFound (error 1009)")
	e.run("topic", "get", "nope", "events").wantError(t, ExitError, "StreamIdNotFound (error 1009)")
	e.run("topic", "get", "orders", "nope").wantError(t, ExitError, "get topic orders/nope", "TopicIdNotFound (error 2010)")
	e.run("topic", "create", "nope", "x").wantError(t, ExitError, "StreamIdNotFound")

	e.ok("send", "orders", "events", "--partition", "1", "a", "b")
	wantLines(t, e.ok("topic", "purge", "orders", "events"), "topic orders/events purged")
	e.okJSON(&got, "topic", "get", "orders", "events")
	if got.MessagesCount != 0 {
		t.Fatalf("purged topic holds %d messages", got.MessagesCount)
	}
	wantLines(t, e.ok("topic", "delete", "orders", "events"), "topic orders/events deleted")
	e.run("topic", "get", "orders", "events").wantError(t, ExitError, "TopicIdNotFound")
}

func TestPartitionAndSegmentCommands(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "1")
	wantLines(t, e.ok("partition", "create", "s", "t", "2"), "2 partition(s) added")
	var ps []partitionView
	e.okJSON(&ps, "partition", "list", "s", "t")
	if len(ps) != 3 || ps[2].ID != 2 {
		t.Fatalf("partitions after create = %+v", ps)
	}
	wantLines(t, e.ok("partition", "delete", "s", "t"), "1 partition(s) deleted")
	e.okJSON(&ps, "partition", "list", "s", "t")
	if len(ps) != 2 {
		t.Fatalf("partitions after delete = %+v", ps)
	}
	wantLines(t, e.ok("partition", "list", "s", "t"), "PARTITION", "SEGMENTS", "CURRENT OFFSET")
	e.run("partition", "delete", "s", "t", "5").wantError(t, ExitError, "InvalidPartitionsCount")
	e.run("partition", "create", "s", "t", "0").wantError(t, ExitError, "TooManyPartitions")

	wantLines(t, e.ok("segment", "delete", "s", "t", "0"), "deleted from s/t partition 0")
	e.ok("segment", "delete", "s", "t", "1", "3")
	wantLines(t, e.ok("segment", "list", "s", "t"), "SEGMENTS")
	e.run("segment", "delete", "s", "t", "9").wantError(t, ExitError, "PartitionNotFound")
	e.run("segment", "delete", "s", "t").wantError(t, ExitUsage, "want 3 to 4 argument(s)")
	e.run("segment", "delete", "s", "t", "x").wantError(t, ExitUsage, "partition")
}

func TestGroupCommands(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "3")
	wantLines(t, e.ok("group", "create", "s", "t", "billing"), `consumer group "billing" created in s/t with id 0`)
	var g groupView
	e.okJSON(&g, "group", "create", "s", "t", "audit")
	if g.ID != 1 || g.Name != "audit" || g.PartitionsCount != 3 {
		t.Fatalf("group create = %+v", g)
	}
	e.run("group", "create", "s", "t", "billing").wantError(t, ExitError, "ConsumerGroupNameAlreadyExists")
	var gs []groupView
	e.okJSON(&gs, "group", "list", "s", "t")
	if len(gs) != 2 {
		t.Fatalf("group list = %+v", gs)
	}
	wantLines(t, e.ok("group", "list", "s", "t"), "billing", "audit", "MEMBERS")
	for _, id := range []string{"billing", "0"} {
		e.okJSON(&g, "group", "get", "s", "t", id)
		if g.Name != "billing" || g.MembersCount != 0 {
			t.Fatalf("group get %s = %+v", id, g)
		}
	}
	wantLines(t, e.ok("group", "get", "s", "t", "billing"), "Name:", "billing", "Members:")
	e.run("group", "get", "s", "t", "nope").wantError(t, ExitError, "ConsumerGroupIdNotFound")
	wantLines(t, e.ok("group", "delete", "s", "t", "audit"), "consumer group audit deleted")
	e.run("group", "delete", "s", "t", "audit").wantError(t, ExitError, "ConsumerGroupIdNotFound")
	e.run("group", "join", "s", "t", "billing").wantError(t, ExitUsage, `unknown command "join"`)
}

func TestOffsetCommands(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "2")
	e.ok("send", "s", "t", "--partition", "1", "a", "b", "c")

	wantLines(t, e.ok("offset", "get", "s", "t", "--partition", "1"), "no offset stored for consumer 1")
	var none map[string]any
	e.okJSON(&none, "offset", "get", "s", "t", "--partition", "1")
	if none["stored_offset"] != nil {
		t.Fatalf("offset get without an offset = %v", none)
	}
	wantLines(t, e.ok("offset", "store", "s", "t", "1", "--partition", "1"), "offset 1 stored for consumer 1")
	var off struct {
		Consumer      string  `json:"consumer"`
		Kind          string  `json:"kind"`
		PartitionID   uint32  `json:"partition_id"`
		CurrentOffset *uint64 `json:"current_offset"`
		StoredOffset  *uint64 `json:"stored_offset"`
	}
	e.okJSON(&off, "offset", "get", "s", "t", "-p", "1")
	if off.StoredOffset == nil || *off.StoredOffset != 1 || *off.CurrentOffset != 2 || off.PartitionID != 1 || off.Kind != "consumer" {
		t.Fatalf("offset get = %+v", off)
	}
	wantLines(t, e.ok("offset", "get", "s", "t", "-p", "1"), "STORED OFFSET", "LAG")
	// A named consumer has offsets of its own.
	e.ok("offset", "store", "s", "t", "2", "-p", "1", "--consumer", "reporting")
	e.okJSON(&off, "offset", "get", "s", "t", "-p", "1", "--consumer", "reporting")
	if *off.StoredOffset != 2 || off.Consumer != "reporting" {
		t.Fatalf("named consumer offset = %+v", off)
	}
	e.run("offset", "store", "s", "t", "9", "-p", "1").wantError(t, ExitError, "InvalidOffset (error 4100)")
	wantLines(t, e.ok("offset", "delete", "s", "t", "-p", "1"), "deleted")
	e.run("offset", "delete", "s", "t", "-p", "1").wantError(t, ExitError, "ConsumerOffsetNotFound")

	e.ok("group", "create", "s", "t", "g")
	e.run("offset", "get", "s", "t", "--group", "g").wantError(t, ExitUsage, "--partition")
	e.run("offset", "get", "s", "t", "--group", "g", "--consumer", "1", "-p", "0").wantError(t, ExitUsage, "exclude each other")
	wantLines(t, e.ok("offset", "get", "s", "t", "--group", "g", "-p", "1"), "no offset stored for group g")
	e.run("offset", "get", "nope", "t", "-p", "0").wantError(t, ExitError, "StreamIdNotFound")
}

func TestSystemCommands(t *testing.T) {
	e := newCLI(t)
	wantLines(t, e.ok("ping"), "pong from "+e.srv.Addr)
	var pings []map[string]any
	e.okJSON(&pings, "ping", "--count", "2", "--interval", "1ms")
	if len(pings) != 2 || pings[1]["seq"] != float64(2) {
		t.Fatalf("ping -o json = %v", pings)
	}

	var me clientView
	e.okJSON(&me, "me")
	if me.UserID == nil || *me.UserID != 0 || me.Transport != "tcp" {
		t.Fatalf("me = %+v", me)
	}
	wantLines(t, e.ok("me"), "Client ID:", "User ID:", "Address:")

	var st statsView
	e.okJSON(&st, "stats")
	if st.ProcessID != uint32(os.Getpid()) || st.ClientsCount == 0 {
		t.Fatalf("stats = %+v", st)
	}
	wantLines(t, e.ok("stats"), "Server version:", "Streams:", "Uptime:")

	var cs []clientView
	e.okJSON(&cs, "client", "list")
	if len(cs) == 0 {
		t.Fatal("client list is empty")
	}
	wantLines(t, e.ok("client", "list"), "ID", "USER", "TRANSPORT", "ADDRESS")
	// A connection that stays open while the CLI looks it up.
	c, err := client.Dial(t.Context(), e.srv.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.GetMe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var one clientView
	e.okJSON(&one, "client", "get", strconv.FormatUint(uint64(d.ClientID), 10))
	if one.ClientID != d.ClientID || one.Address != d.Address {
		t.Fatalf("client get = %+v, want %+v", one, d)
	}
	e.run("client", "get", "4000000").wantError(t, ExitError, "ClientNotFound")
	e.run("client", "get", "x").wantError(t, ExitUsage, "client id")

	var opts []map[string]any
	e.okJSON(&opts, "options")
	keys := map[string]bool{}
	for _, o := range opts {
		keys[o["key"].(string)] = true
	}
	if !keys["segment_size"] || !keys["message_expiry"] || !keys["durability"] || !keys["replication_factor"] ||
		!keys["local_retention_size"] || !keys["local_retention_age"] || len(opts) != 13 {
		t.Fatalf("options = %v", opts)
	}
	wantLines(t, e.ok("options", "topic"), "KEY", "segment_size", "1 GiB")
	wantLines(t, e.ok("options", "stream"), "no stream options")
	e.run("options", "queue").wantError(t, ExitUsage, "topic, stream or user")

	var cl struct {
		Name  string           `json:"name"`
		Nodes []map[string]any `json:"nodes"`
	}
	e.okJSON(&cl, "cluster")
	if cl.Name == "" || len(cl.Nodes) != 1 || cl.Nodes[0]["role"] != "leader" {
		t.Fatalf("cluster = %+v", cl)
	}
	wantLines(t, e.ok("cluster", "metadata"), "NODE", "leader", "healthy")
	// A single node has no replicas to move.
	e.run("cluster", "rebalance").wantError(t, ExitError, "FeatureUnavailable")

	dir := t.TempDir()
	path := filepath.Join(dir, "snap.zip")
	wantLines(t, e.ok("snapshot", path), "snapshot written to "+path)
	checkZip(t, mustRead(t, path))
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file mode: %v %v", info, err)
	}
	checkZip(t, []byte(e.ok("snapshot", "-", "--compression", "stored", "--type", "config,test")))
	e.run("snapshot", "--compression", "rar").wantError(t, ExitUsage, "--compression")
	e.run("snapshot", "--type", "everything").wantError(t, ExitUsage, "--type")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkZip(t *testing.T, data []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(zr.File) == 0 {
		t.Fatalf("snapshot is not a non-empty ZIP: %v", err)
	}
}

func TestHelpAndCompletion(t *testing.T) {
	e := newCLI(t)
	out := e.ok()
	wantLines(t, out, "Exit codes", "stream", "poll", "send", "context", "server")
	out = e.ok("completion", "bash")
	if !strings.Contains(out, "bash completion") {
		t.Fatalf("completion bash:\n%.200s", out)
	}
	e.ok("completion", "zsh")
	e.ok("completion", "fish")
	wantLines(t, e.ok("topic", "create", "--help"), "--message-expiry", "--max-topic-size", "--segment-size", "--enforce-fsync", "--compression", "--local-retention-size", "--local-retention-age", "--addr", "--output")
	// Dynamic completion of context names goes through cobra's hidden command.
	e.ok("context", "create", "prod", "--addr", "h:1")
	wantLines(t, e.ok("__complete", "context", "use", ""), "prod")
	// Resource names complete from the server.
	e.ok("stream", "create", "orders")
	e.ok("topic", "create", "orders", "events")
	e.ok("group", "create", "orders", "events", "billing")
	wantLines(t, e.ok("__complete", "stream", "get", ""), "orders")
	wantLines(t, e.ok("__complete", "topic", "get", "orders", "ev"), "events")
	wantLines(t, e.ok("__complete", "group", "get", "orders", "events", ""), "billing")
	wantLines(t, e.ok("__complete", "poll", "orders", "events", "--group", ""), "billing")
	wantLines(t, e.ok("__complete", "user", "get", "ig"), "iggy")
	wantLines(t, e.ok("__complete", "stream", "list", "--output", ""), "table", "json")
	if out := e.ok("__complete", "stream", "get", "zz"); strings.Contains(out, "orders") {
		t.Fatalf("completion ignores the prefix:\n%s", out)
	}
	e.run("bogus").wantError(t, ExitUsage, `unknown command "bogus"`)
	e.run("strem", "list").wantError(t, ExitUsage, `did you mean "stream"`)
}
