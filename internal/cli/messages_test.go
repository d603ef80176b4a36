package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/testutil"
)

// polled is the part of a `poll -o json` line the tests look at.
type polled struct {
	Partition     uint32         `json:"partition"`
	Offset        uint64         `json:"offset"`
	ID            string         `json:"id"`
	Timestamp     string         `json:"timestamp"`
	TimestampUS   uint64         `json:"timestamp_us"`
	Headers       map[string]any `json:"headers"`
	Payload       *string        `json:"payload"`
	PayloadBase64 *string        `json:"payload_base64"`
}

// sent is the JSON output of `send`.
type sent struct {
	Messages   int              `json:"messages"`
	Batches    int              `json:"batches"`
	Partitions []partitionRange `json:"partitions"`
}

// poll runs `poll -o json` and returns the messages.
func (e *cliEnv) poll(args ...string) []polled {
	e.t.Helper()
	return jsonLines[polled](e.t, e.ok(append(append([]string{"poll"}, args...), "-o", "json")...))
}

func offsets(ms []polled) []uint64 {
	out := []uint64{}
	for _, m := range ms {
		out = append(out, m.Offset)
	}
	return out
}

func payloads(ms []polled) []string {
	out := []string{}
	for _, m := range ms {
		if m.Payload == nil {
			out = append(out, "<binary>")
			continue
		}
		out = append(out, *m.Payload)
	}
	return out
}

func seq(from, to uint64) []uint64 {
	out := []uint64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestSendInputs(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "1")
	dir := t.TempDir()

	wantLines(t, e.ok("send", "s", "t", "one", "two"), "sent 2 message(s) to s/t: partition 0 offsets 0-1")
	r := e.runStdin("three\r\n\nfour\n", "send", "s", "t")
	r.wantCode(t, ExitOK)
	wantLines(t, r.stdout, "sent 2 message(s)", "offsets 2-3")
	e.runStdin("five\nsix\n", "send", "s", "t", "--raw").wantCode(t, ExitOK)
	lines := filepath.Join(dir, "lines.txt")
	if err := os.WriteFile(lines, []byte("seven\neight"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.ok("send", "s", "t", "--file", lines)
	blob := make([]byte, 256)
	for i := range blob {
		blob[i] = byte(i)
	}
	blobFile := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(blobFile, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	var st sent
	e.okJSON(&st, "send", "s", "t", "--raw", "--file", blobFile)
	if st.Messages != 1 || st.Batches != 1 || len(st.Partitions) != 1 || st.Partitions[0].FirstOffset != 7 {
		t.Fatalf("send --raw --file = %+v", st)
	}

	ms := e.poll("s", "t", "--first", "--count", "100")
	want := []string{"one", "two", "three", "four", "five\nsix\n", "seven", "eight", "<binary>"}
	if got := payloads(ms); !cmp.Equal(got, want) {
		t.Fatalf("payloads %q, want %q", got, want)
	}
	if got := offsets(ms); !cmp.Equal(got, seq(0, 7)) {
		t.Fatalf("offsets %v", got)
	}
	if b, err := base64.StdEncoding.DecodeString(*ms[7].PayloadBase64); err != nil || !cmp.Equal(b, blob) {
		t.Fatalf("binary payload = %x (%v)", b, err)
	}

	// Headers on every message, typed values in JSON and text.
	e.ok("send", "s", "t", "-H", "source=web", "-H", "n:u32=5", "-H", "ok:bool=true", "-H", "ratio:f64=0.5", "with-headers")
	ms = e.poll("s", "t", "--offset", "8", "--count", "1")
	wantHeaders := map[string]any{"source": "web", "n": float64(5), "ok": true, "ratio": 0.5}
	if len(ms) != 1 || !cmp.Equal(ms[0].Headers, wantHeaders) {
		t.Fatalf("headers %v, want %v", ms, wantHeaders)
	}
	wantLines(t, e.ok("poll", "s", "t", "--offset", "8", "--count", "1"), "source=web", "n=5", "ok=true", "with-headers")

	// Many lines are sent in batches of at most 1000 messages.
	var in strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&in, "line-%d\n", i)
	}
	r = e.runStdin(in.String(), "send", "s", "t", "-o", "json")
	r.wantCode(t, ExitOK)
	st = jsonLines[sent](t, strings.ReplaceAll(r.stdout, "\n", ""))[0]
	if st.Messages != 2500 || st.Batches != 3 || st.Partitions[0].FirstOffset != 9 || st.Partitions[0].LastOffset != 2508 {
		t.Fatalf("2500 lines = %+v", st)
	}

	r = e.runStdin("", "send", "s", "t")
	r.wantCode(t, ExitOK)
	wantLines(t, r.stderr, "nothing sent")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"partition and key", []string{"--partition", "0", "--key", "k", "x"}, ExitUsage, []string{"exclude each other"}},
		{"arguments and raw", []string{"--raw", "x"}, ExitUsage, []string{"--raw"}},
		{"arguments and file", []string{"--file", lines, "x"}, ExitUsage, []string{"--file"}},
		{"empty message", []string{""}, ExitUsage, []string{"empty"}},
		{"bad header", []string{"-H", "novalue", "x"}, ExitUsage, []string{"--header"}},
		{"bad header kind", []string{"-H", "n:u8=300", "x"}, ExitUsage, []string{"uint8"}},
		{"missing file", []string{"--file", filepath.Join(dir, "nope")}, ExitUsage, []string{"--file"}},
		{"unknown partition", []string{"--partition", "7", "x"}, ExitError, []string{"send to s/t", "PartitionNotFound"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.run(append([]string{"send", "s", "t"}, tc.args...)...).wantError(t, tc.code, tc.want...)
		})
	}
	e.run("send", "nope", "t", "x").wantError(t, ExitError, "send to nope/t", "StreamIdNotFound (error 1009)")
	e.run("send", "s", "nope", "x").wantError(t, ExitError, "TopicIdNotFound (error 2010)")
}

func TestSendPartitioning(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "4")
	var a, b sent
	e.okJSON(&a, "send", "s", "t", "--key", "customer-42", "x")
	e.okJSON(&b, "send", "s", "t", "--key", "customer-42", "y", "z")
	if a.Partitions[0].Partition != b.Partitions[0].Partition || b.Partitions[0].FirstOffset != 1 {
		t.Fatalf("the same key went to %+v and %+v", a, b)
	}
	e.okJSON(&a, "send", "s", "t", "--partition", "3", "x")
	if a.Partitions[0].Partition != 3 {
		t.Fatalf("--partition 3 wrote %+v", a)
	}
	// Balanced: the server spreads batches over the partitions.
	seen := map[uint32]bool{}
	for range 4 {
		e.okJSON(&a, "send", "s", "t", "x")
		seen[a.Partitions[0].Partition] = true
	}
	if len(seen) != 4 {
		t.Fatalf("balanced sends reached partitions %v", seen)
	}
}

func TestPollStrategies(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "1")
	var args []string
	for i := range 6 {
		args = append(args, "m"+strconv.Itoa(i))
	}
	e.ok(append([]string{"send", "s", "t"}, args...)...)
	args = args[:0]
	for i := 6; i < 12; i++ {
		args = append(args, "m"+strconv.Itoa(i))
	}
	e.ok(append([]string{"send", "s", "t"}, args...)...)
	second := e.poll("s", "t", "--offset", "6", "--count", "1")[0]

	for _, tc := range []struct {
		name string
		args []string
		want []uint64
	}{
		{"offset", []string{"--offset", "3", "--count", "2"}, []uint64{3, 4}},
		{"first", []string{"--first", "--count", "3"}, []uint64{0, 1, 2}},
		{"last", []string{"--last", "--count", "2"}, []uint64{10, 11}},
		{"default start and count", nil, seq(0, 9)},
		{"count beyond the end", []string{"--offset", "9", "--count", "100"}, []uint64{9, 10, 11}},
		{"offset past the end", []string{"--offset", "50"}, []uint64{}},
		{"next without a stored offset", []string{"--next", "--consumer", "fresh", "--count", "2"}, []uint64{0, 1}},
		{"timestamp in microseconds", []string{"--timestamp", strconv.FormatUint(second.TimestampUS, 10), "-n", "100"}, seq(6, 11)},
		{"timestamp RFC 3339", []string{"--timestamp", second.Timestamp, "-n", "100"}, seq(6, 11)},
		{"timestamp as a duration ago", []string{"--timestamp", "1h", "-n", "100"}, seq(0, 11)},
		{"one partition", []string{"--partition", "0", "--offset", "11"}, []uint64{11}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := offsets(e.poll(append([]string{"s", "t"}, tc.args...)...)); !cmp.Equal(got, tc.want) {
				t.Fatalf("offsets %v, want %v", got, tc.want)
			}
		})
	}

	// --next continues after the stored offset; --auto-commit moves it.
	e.ok("offset", "store", "s", "t", "3", "--consumer", "7")
	if got := offsets(e.poll("s", "t", "--consumer", "7", "--count", "2")); !cmp.Equal(got, []uint64{4, 5}) {
		t.Fatalf("default --next for a consumer: %v", got)
	}
	if got := offsets(e.poll("s", "t", "--next", "--consumer", "7", "--count", "3", "--auto-commit")); !cmp.Equal(got, []uint64{4, 5, 6}) {
		t.Fatalf("--next --auto-commit: %v", got)
	}
	var off map[string]any
	e.okJSON(&off, "offset", "get", "s", "t", "--consumer", "7")
	if off["stored_offset"] != float64(6) {
		t.Fatalf("stored offset after auto-commit: %v", off)
	}
	if got := offsets(e.poll("s", "t", "--consumer", "7", "-n", "100")); !cmp.Equal(got, seq(7, 11)) {
		t.Fatalf("second --next: %v", got)
	}

	// Output formats.
	out := e.ok("poll", "s", "t", "--first", "--count", "2")
	wantLines(t, out, "PARTITION", "OFFSET", "TIMESTAMP", "PAYLOAD", "m0", "m1")
	if n := strings.Count(out, "\n"); n != 3 {
		t.Fatalf("table has %d lines, want a header and 2 rows:\n%s", n, out)
	}
	if got := e.ok("poll", "s", "t", "--first", "--count", "3", "--raw"); got != "m0\nm1\nm2\n" {
		t.Fatalf("--raw = %q", got)
	}
	if got := e.ok("poll", "s", "t", "--offset", "40"); got != "" {
		t.Fatalf("an empty poll printed %q", got)
	}
	m := e.poll("s", "t", "--first", "--count", "1")[0]
	if len(m.ID) != 36 || m.Payload == nil || *m.Payload != "m0" || m.Timestamp == "" {
		t.Fatalf("poll -o json = %+v", m)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"two strategies", []string{"--first", "--last"}, ExitUsage, "exclude each other"},
		{"raw and json", []string{"--raw", "-o", "json"}, ExitUsage, "--raw"},
		{"zero count", []string{"--count", "0"}, ExitUsage, "--count"},
		{"bad timestamp", []string{"--timestamp", "yesterday-ish"}, ExitUsage, "--timestamp"},
		{"bad output", []string{"-o", "xml"}, ExitUsage, "--output"},
		{"partition with group", []string{"--group", "g", "--partition", "0"}, ExitUsage, "--group"},
		{"unknown partition", []string{"--partition", "5"}, ExitError, "PartitionNotFound"},
		{"unknown group", []string{"--group", "nobody"}, ExitError, "ConsumerGroupIdNotFound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.run(append([]string{"poll", "s", "t"}, tc.args...)...).wantError(t, tc.code, tc.want)
		})
	}
	e.run("poll", "nope", "t").wantError(t, ExitError, "StreamIdNotFound (error 1009)")
	e.run("poll", "nope", "t", "--partition", "0").wantError(t, ExitError, "StreamIdNotFound (error 1009)")
	e.run("poll", "s", "nope").wantError(t, ExitError, "TopicIdNotFound (error 2010)")
}

func TestPollAllPartitionsAndGroups(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "3")
	for p := range 3 {
		ps := strconv.Itoa(p)
		e.ok("send", "s", "t", "--partition", ps, "p"+ps+"-a", "p"+ps+"-b")
	}
	// Without --partition a consumer reads every partition.
	ms := e.poll("s", "t", "-n", "100")
	if len(ms) != 6 {
		t.Fatalf("all partitions: %+v", ms)
	}
	per := map[uint32][]string{}
	for _, m := range ms {
		per[m.Partition] = append(per[m.Partition], *m.Payload)
	}
	for p := range 3 {
		want := []string{fmt.Sprintf("p%d-a", p), fmt.Sprintf("p%d-b", p)}
		if !cmp.Equal(per[uint32(p)], want) {
			t.Fatalf("partition %d: %v, want %v", p, per[uint32(p)], want)
		}
	}

	// A group member gets every partition; auto-commit stores the group's
	// offsets, so the next run starts after them; the member leaves at the end.
	e.ok("group", "create", "s", "t", "g")
	if ms := e.poll("s", "t", "--group", "g", "--auto-commit", "-n", "100"); len(ms) != 6 {
		t.Fatalf("group poll: %+v", ms)
	}
	for p := range 3 {
		var off map[string]any
		e.okJSON(&off, "offset", "get", "s", "t", "--group", "g", "-p", strconv.Itoa(p))
		if off["stored_offset"] != float64(1) {
			t.Fatalf("group offset on partition %d: %v", p, off)
		}
	}
	if got := e.ok("poll", "s", "t", "--group", "g"); got != "" {
		t.Fatalf("second group poll printed %q", got)
	}
	e.ok("send", "s", "t", "--partition", "2", "late")
	if ms := e.poll("s", "t", "--group", "0"); len(ms) != 1 || *ms[0].Payload != "late" {
		t.Fatalf("group poll by id after a new message: %+v", ms)
	}
	var g groupView
	e.okJSON(&g, "group", "get", "s", "t", "g")
	if g.MembersCount != 0 {
		t.Fatalf("the CLI did not leave the group: %+v", g)
	}
}

// startFollow runs `poll ... --follow` in the background; wait returns
// its result once it ended.
func (e *cliEnv) startFollow(ctx context.Context, args ...string) (stdout *testutil.SyncBuffer, wait func() result) {
	out, errb := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, Env{Args: args, Environ: e.environ, Stdin: strings.NewReader(""), Stdout: out, Stderr: errb})
	}()
	return out, func() result {
		select {
		case code := <-done:
			return result{args: args, code: code, stdout: out.String(), stderr: errb.String()}
		case <-time.After(60 * time.Second):
			e.t.Fatalf("iggo %s did not end", strings.Join(args, " "))
			return result{}
		}
	}
}

// waitFor waits until out contains s (bounded, as a hang guard).
func waitFor(t *testing.T, out *testutil.SyncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("output never contained %q:\n%s", s, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPollFollow(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "2")
	e.ok("send", "s", "t", "--partition", "0", "before")

	// --follow waits for messages sent after it started and ends at --count.
	out, wait := e.startFollow(context.Background(), "poll", "s", "t", "--follow", "--count", "3", "--first", "-o", "json", "--interval", "5ms")
	waitFor(t, out, `"before"`)
	e.ok("send", "s", "t", "--partition", "1", "after-1")
	e.ok("send", "s", "t", "--partition", "0", "after-2")
	r := wait()
	r.wantCode(t, ExitOK)
	got := map[string]bool{}
	for _, m := range jsonLines[polled](t, r.stdout) {
		got[*m.Payload] = true
	}
	if !cmp.Equal(got, map[string]bool{"before": true, "after-1": true, "after-2": true}) {
		t.Fatalf("followed %v", got)
	}

	// Interrupting --follow ends it normally; a group member leaves.
	e.ok("group", "create", "s", "t", "g")
	ctx, cancel := context.WithCancel(context.Background())
	out, wait = e.startFollow(ctx, "poll", "s", "t", "--follow", "--group", "g", "--raw", "--first", "--interval", "5ms")
	waitFor(t, out, "after-2\n")
	cancel()
	r = wait()
	r.wantCode(t, ExitOK)
	var g groupView
	e.okJSON(&g, "group", "get", "s", "t", "g")
	if g.MembersCount != 0 {
		t.Fatalf("interrupted group poll did not leave: %+v", g)
	}
	// Interrupting any other command is exit code 130.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	e.runCtx(ctx, "", "stream", "list").wantCode(t, ExitInterrupted)
}
