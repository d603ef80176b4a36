package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// TestPollEmptySaysSo is the README's first poll: balanced sends land on
// partition 1, so a poll of partition 0 finds nothing and must say so.
func TestPollEmptySaysSo(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "orders")
	e.ok("topic", "create", "orders", "events", "3")
	wantLines(t, e.ok("send", "orders", "events", "first", "second"), "sent 2 message(s) to orders/events: partition 1 offsets 0-1")

	r := e.run("poll", "orders", "events", "--partition", "0", "--offset", "0", "--count", "10")
	r.wantCode(t, ExitOK)
	if r.stdout != "" {
		t.Fatalf("empty poll printed %q", r.stdout)
	}
	want := "no messages in orders/events partition 0 from offset 0; the topic has 3 partition(s), with messages in partition 1 offsets 0-1\n"
	if r.stderr != want {
		t.Fatalf("empty poll stderr %q, want %q", r.stderr, want)
	}
	r = e.run("poll", "orders", "events", "--offset", "5")
	r.wantCode(t, ExitOK)
	wantLines(t, r.stderr, "no messages in orders/events in any partition from offset 5; the topic has 3 partition(s)")

	// Without --partition every partition is read.
	out := e.ok("poll", "orders", "events", "--offset", "0", "--count", "10")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasSuffix(lines[1], "first") || !strings.HasSuffix(lines[2], "second") {
		t.Fatalf("poll of every partition:\n%s", out)
	}

	e.ok("topic", "create", "orders", "quiet", "2")
	r = e.run("poll", "orders", "quiet")
	r.wantCode(t, ExitOK)
	wantLines(t, r.stderr, "no messages in orders/quiet in any partition from the first message; the topic has 2 partition(s), all empty")
	e.ok("group", "create", "orders", "quiet", "g")
	r = e.run("poll", "orders", "quiet", "--group", "g")
	r.wantCode(t, ExitOK)
	wantLines(t, r.stderr, "no messages in orders/quiet for group g (assigned partitions 0,1) after the stored offset of group g")
}

// TestPollPartitionByPartition pins the order of a poll without
// --partition: all of partition 0, then partition 1, ...
func TestPollPartitionByPartition(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "3")
	e.ok("send", "s", "t", "--partition", "2", "c0", "c1")
	e.ok("send", "s", "t", "--partition", "0", "a0", "a1", "a2")
	e.ok("send", "s", "t", "--partition", "1", "b0")
	if got := e.ok("poll", "s", "t", "--raw", "-n", "100"); got != "a0\na1\na2\nb0\nc0\nc1\n" {
		t.Fatalf("order %q", got)
	}
	if got := e.ok("poll", "s", "t", "--raw", "-n", "4"); got != "a0\na1\na2\nb0\n" {
		t.Fatalf("order with --count %q", got)
	}
}

// TestPollTableCutsLargePayloads: a big payload is cut in the table with
// its size shown; binary is shown as hex; JSON and --raw carry it all.
func TestPollTableCutsLargePayloads(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "1")
	big := strings.Repeat("x", 2<<20)
	e.runStdin(big, "send", "s", "t", "--raw").wantCode(t, ExitOK)
	bin := "\x89PNG\r\n\x1a\n\xff\xfe" + strings.Repeat("\x00\x01", 100)
	e.runStdin(bin, "send", "s", "t", "--raw").wantCode(t, ExitOK)
	e.runStdin("line one\nline two", "send", "s", "t", "--raw").wantCode(t, ExitOK)

	out := e.ok("poll", "s", "t")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("table:\n%.2000s", out)
	}
	for _, l := range lines {
		if len(l) > 300 {
			t.Fatalf("table line of %d bytes: %.300s", len(l), l)
		}
	}
	wantLines(t, lines[1], strings.Repeat("x", 100)+"… (2097152 bytes, 2 MiB)")
	wantLines(t, lines[2], "hex:89504e470d0a1a0afffe"+strings.Repeat("0001", 11)+"… (210 bytes)")
	wantLines(t, lines[3], `"line one\nline two"`)

	ms := e.poll("s", "t", "--count", "1")
	if len(ms) != 1 || ms[0].Payload == nil || *ms[0].Payload != big {
		t.Fatalf("poll -o json lost the payload")
	}
	if raw := e.ok("poll", "s", "t", "--count", "2", "--raw"); raw != big+"\n"+bin+"\n" {
		t.Fatalf("poll --raw returned %d bytes, want %d", len(raw), len(big)+len(bin)+2)
	}
	if raw := e.ok("poll", "s", "t", "--offset", "1", "--count", "1", "--raw", "--delimiter", ""); raw != bin {
		t.Fatalf("poll --raw --delimiter '' returned %q", raw)
	}
	e.run("poll", "s", "t", "--delimiter", "").wantError(t, ExitUsage, "--delimiter goes with --raw")
}

func TestPollFormatAndYAML(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "2")
	e.ok("send", "s", "t", "--partition", "1", "-H", "source=web", "hello", "world")

	got := e.ok("poll", "s", "t", "--format", `{{.Partition}}/{{.Offset}} {{.Size}} {{.Payload}} {{index .Headers "source"}} {{hex .Payload}}`)
	if want := "1/0 5 hello web 68656c6c6f\n1/1 5 world web 776f726c64\n"; got != want {
		t.Fatalf("--format printed %q, want %q", got, want)
	}
	if got := e.ok("poll", "s", "t", "-n", "1", "--format", `{{json .Headers}} {{quote .Payload}} {{trunc 2 .Payload}}`); got != `{"source":"web"} "hello" he`+"\n" {
		t.Fatalf("--format functions printed %q", got)
	}
	e.run("poll", "s", "t", "--format", "{{.Nope").wantError(t, ExitUsage, "--format")
	e.run("poll", "s", "t", "--format", "{{.Nope}}").wantError(t, ExitUsage, "--format", "Nope")
	e.run("poll", "s", "t", "--format", "x", "--raw").wantError(t, ExitUsage, "exclude each other")
	e.run("poll", "s", "t", "--format", "x", "-o", "json").wantError(t, ExitUsage, "exclude each other")
	e.run("poll", "s", "t", "--raw", "-o", "yaml").wantError(t, ExitUsage, "exclude each other")

	out := e.ok("poll", "s", "t", "-o", "yaml")
	dec := yaml.NewDecoder(strings.NewReader(out))
	var docs []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			break
		}
		docs = append(docs, m)
	}
	if len(docs) != 2 || docs[0]["payload"] != "hello" || docs[1]["offset"] != 1 || docs[1]["partition"] != 1 ||
		!cmp.Equal(docs[0]["headers"], map[string]any{"source": "web"}) {
		t.Fatalf("poll -o yaml:\n%s\n%v", out, docs)
	}
	// Every -o json command answers -o yaml with the same fields.
	var g map[string]any
	if err := yaml.Unmarshal([]byte(e.ok("topic", "get", "s", "t", "-o", "yaml")), &g); err != nil || g["name"] != "t" || g["partitions_count"] != 2 {
		t.Fatalf("topic get -o yaml: %v %v", g, err)
	}
	e.run("stream", "list", "-o", "xml").wantError(t, ExitUsage, "want table, json or yaml")
}
