package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/internal/testutil"
)

// readmeSection is the README section whose examples TestReadmeExamples
// runs: every CLI example there runs against one local server.
const readmeSection = "## CLI"

// readmeBlock is one fenced code block of the README.
type readmeBlock struct {
	lang string
	line int // of the opening fence, 1-based
	text []string
}

// headingLevel returns the level of a Markdown heading line ("## x" is
// 2), or 0 for any other line.
func headingLevel(l string) int {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	if n == 0 || !strings.HasPrefix(l[n:], " ") {
		return 0
	}
	return n
}

// readmeBlocks returns the fenced blocks of the README section that
// starts with the heading named section ("## CLI", "### Replication"),
// up to the next heading of the same or a higher level.
func readmeBlocks(t *testing.T, section string) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []readmeBlock
	in, fenced := false, false
	for i, l := range lines {
		switch {
		case !fenced && headingLevel(l) > 0:
			if l == section {
				in = true
			} else if headingLevel(l) <= headingLevel(section) {
				in = false
			}
		case !in:
		case !fenced && strings.HasPrefix(l, "```"):
			fenced = true
			blocks = append(blocks, readmeBlock{lang: strings.TrimPrefix(l, "```"), line: i + 1})
		case fenced && l == "```":
			fenced = false
		case fenced:
			b := &blocks[len(blocks)-1]
			b.text = append(b.text, l)
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md has no code blocks under %q", section)
	}
	return blocks
}

// Values that differ from run to run, replaced before comparing.
var (
	readmeTime   = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?`)
	readmeUUID   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	readmeBigNum = regexp.MustCompile(`\b\d{13,}\b`)
	readmeSpaces = regexp.MustCompile(`[ \t]+`)
)

// normalizeOutput replaces times, UUIDs and long numbers (µs timestamps,
// checksums) by placeholders, collapses runs of blanks (table widths
// depend on the values) and drops trailing blank lines.
func normalizeOutput(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = readmeTime.ReplaceAllString(l, "<time>")
		l = readmeUUID.ReplaceAllString(l, "<uuid>")
		l = readmeBigNum.ReplaceAllString(l, "<n>")
		out = append(out, strings.TrimSpace(readmeSpaces.ReplaceAllString(l, " ")))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// readmeShell runs README command lines with the built iggo first on
// PATH, against the test's server, in a scratch directory.
type readmeShell struct {
	t       *testing.T
	dir     string
	environ []string
}

func newReadmeShell(t *testing.T, e *cliEnv) *readmeShell {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("the README examples are bash: %v", err)
	}
	bin := filepath.Dir(iggoBinary(t)) // built once per test run (binary_test.go)
	home := t.TempDir()
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home, "XDG_CONFIG_HOME="+home)
	env = append(env, e.environ...)
	return &readmeShell{t: t, dir: t.TempDir(), environ: env}
}

// run runs script with bash -e -o pipefail and returns standard output
// and error together, as a terminal shows them.
func (s *readmeShell) run(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = s.dir, s.environ
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestReadmeExamples runs the CLI examples of the README against a fresh
// server with the built binary: in a console block each "$ iggo ..."
// line must print what follows it (up to the next "$ " line, modulo
// normalizeOutput), in a sh block every line must succeed.
func TestReadmeExamples(t *testing.T) {
	e := newCLI(t)
	sh := newReadmeShell(t, e)
	// Files the examples name.
	if err := os.WriteFile(filepath.Join(sh.dir, "app.log"), []byte("GET /\nPOST /orders\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	photo := append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{0x00, 0xff, 0x7f}, 200)...)
	if err := os.WriteFile(filepath.Join(sh.dir, "photo.jpg"), photo, 0o600); err != nil {
		t.Fatal(err)
	}
	consoles, shells := 0, 0
	for _, b := range readmeBlocks(t, readmeSection) {
		switch b.lang {
		case "console":
			consoles++
			runConsoleBlock(t, sh, b)
		case "sh":
			shells++
			runShellBlock(t, sh, b)
		default:
			t.Fatalf("README.md:%d: a %q block in %s: mark it console or sh so it is run", b.line, b.lang, readmeSection)
		}
	}
	if consoles == 0 || shells == 0 {
		t.Fatalf("README %s: %d console and %d sh blocks; want both", readmeSection, consoles, shells)
	}
}

func runConsoleBlock(t *testing.T, sh *readmeShell, b readmeBlock) {
	t.Helper()
	type step struct {
		line    int
		command string
		want    []string
	}
	var steps []step
	for i, l := range b.text {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			if !strings.HasPrefix(c, "iggo ") {
				t.Fatalf("README.md:%d: a console command that is not iggo: %q", b.line+1+i, c)
			}
			steps = append(steps, step{line: b.line + 1 + i, command: c})
			continue
		}
		if len(steps) == 0 {
			t.Fatalf("README.md:%d: output before the first command", b.line+1+i)
		}
		steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
	}
	for _, st := range steps {
		out, err := sh.run(st.command)
		wantErr := len(st.want) > 0 && strings.HasPrefix(st.want[0], "iggo: ")
		if (err != nil) != wantErr {
			t.Fatalf("README.md:%d: %s: %v (error expected: %v)\n%s", st.line, st.command, err, wantErr, out)
		}
		got, want := normalizeOutput(out), normalizeOutput(strings.Join(st.want, "\n"))
		if got != want {
			t.Errorf("README.md:%d: %s\nprints:\n%s\nREADME says:\n%s", st.line, st.command, out, strings.Join(st.want, "\n"))
		}
	}
}

// runShellBlock runs a sh block as one script, so variables carry from
// line to line; a --follow line is interrupted after two seconds and
// must then exit 0 as documented.
func runShellBlock(t *testing.T, sh *readmeShell, b readmeBlock) {
	t.Helper()
	var script []string
	for i, l := range b.text {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.Contains(l, "--follow") {
			l = "timeout --preserve-status -s INT 2 " + l
		}
		script = append(script, "echo '+ README.md:"+itoa(b.line+1+i)+"'", l)
	}
	out, err := sh.run(strings.Join(script, "\n"))
	if err != nil {
		t.Fatalf("README.md:%d: sh block failed: %v\n%s", b.line, err, out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// readmeProc is a README command left running in the background.
type readmeProc struct {
	line string
	cmd  *exec.Cmd
	out  *testutil.SyncBuffer
	done chan struct{}
}

// start runs line in the background (bash execs it, so the process is
// the command itself); the test's cleanup stops it by PID.
func (s *readmeShell) start(line string) *readmeProc {
	s.t.Helper()
	p := &readmeProc{line: line, cmd: exec.Command("bash", "-c", "exec "+line), out: new(testutil.SyncBuffer), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = s.dir, s.environ
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		s.t.Fatalf("%s: %v", line, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	s.t.Cleanup(p.stop)
	return p
}

// stop sends SIGTERM (the cluster commands stop their nodes on it, as on
// Ctrl-C) and SIGKILL if the process is still there after
// readmeStopWait.
func (p *readmeProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(readmeStopWait):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// readmeStopWait bounds a stop: cluster start gives each node 10 s.
const readmeStopWait = 30 * time.Second

// waitFor waits up to d for the process to print want, failing if it
// exits first or d passes.
func (p *readmeProc) waitFor(t *testing.T, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(p.out.String(), want) {
		select {
		case <-p.done:
			t.Fatalf("%s exited before printing %q:\n%s", p.line, want, p.out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q after %s:\n%s", p.line, want, d, p.out.String())
		}
	}
}

// readmeClusterPorts are the ports of the README's cluster: TCP 18090+i
// and replica 18190+i of cluster start's default --base-port.
var readmeClusterPorts = []int{18090, 18091, 18092, 18190, 18191, 18192}

// TestReadmeReplication runs the README's "### Replication" lines as
// written, in a scratch directory: the cluster start line in the
// background until its connect: line, the stream create, cluster
// partitions and cluster status lines (status must exit 0 naming a
// leader), then it kills
// node 2's process, runs the restart-node line in the background and
// waits until cluster status reports all three nodes up with a leader.
// It uses the README's ports (18090.. by default) and fails when one is
// taken rather than moving them: the lines are checked as written, and a
// CI machine has them free. In -short mode it is skipped (iggoBinary).
func TestReadmeReplication(t *testing.T) {
	bin := iggoBinary(t)
	for _, port := range readmeClusterPorts {
		ln, err := net.Listen("tcp", "127.0.0.1:"+itoa(port))
		if err != nil {
			t.Fatalf("the README's cluster needs port %d on 127.0.0.1, which is taken: %v", port, err)
		}
		ln.Close()
	}
	blocks := readmeBlocks(t, "### Replication")
	if len(blocks) != 1 || blocks[0].lang != "sh" {
		t.Fatalf("README ### Replication: want one sh block, have %d", len(blocks))
	}
	b := blocks[0]
	sh := newReadmeShell(t, &cliEnv{t: t, environ: []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml")}})
	layout := &local.Layout{Dir: filepath.Join(sh.dir, DefaultClusterDir)}
	var cluster *readmeProc
	steps := 0
	for i, l := range b.text {
		line := b.line + 1 + i
		cmd, _, _ := strings.Cut(l, "#")
		cmd = strings.TrimSpace(cmd)
		switch {
		case cmd == "":
			continue
		case cmd == "go build -o iggo ./cmd/iggo":
			// The test built the binary already (iggoBinary); it stands in
			// for this line's output.
			if err := os.Symlink(bin, filepath.Join(sh.dir, "iggo")); err != nil {
				t.Fatal(err)
			}
		case cmd == "./iggo cluster start":
			cluster = sh.start(l)
			cluster.waitFor(t, "connect:", 90*time.Second)
		case strings.HasPrefix(cmd, "./iggo cluster status"):
			out, err := sh.run(l)
			if err != nil || !strings.Contains(out, "leader") {
				t.Fatalf("README.md:%d: %s: %v; want exit 0 naming a leader:\n%s", line, cmd, err, out)
			}
		case strings.HasPrefix(cmd, "./iggo cluster restart-node "):
			n, err := strconv.Atoi(strings.Fields(cmd)[3])
			if err != nil || n < 0 || n > 2 || cluster == nil {
				t.Fatalf("README.md:%d: %s: want a node 0..2 of a started cluster", line, cmd)
			}
			killReadmeNode(t, cluster, layout, n)
			restart := sh.start(l)
			restart.waitFor(t, "started "+local.NodeName(n), 30*time.Second)
			waitReadmeCluster(t, sh, 3, 60*time.Second)
		case strings.HasPrefix(cmd, "./iggo "):
			if out, err := sh.run(l); err != nil {
				t.Fatalf("README.md:%d: %s: %v\n%s", line, cmd, err, out)
			}
		default:
			t.Fatalf("README.md:%d: %q: the test does not know how to run this line", line, cmd)
		}
		steps++
	}
	if steps != 6 {
		t.Fatalf("README ### Replication: ran %d lines, want 6 (build, start, stream create, cluster partitions, status, restart-node)", steps)
	}
}

// killReadmeNode kills node n of the cluster that cluster runs (its PID
// is in the node's server.pid) and waits until cluster start reports it
// gone, so its ports are free for restart-node.
func killReadmeNode(t *testing.T, cluster *readmeProc, l *local.Layout, n int) {
	t.Helper()
	data, err := os.ReadFile(l.PIDPath(n))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		t.Fatalf("%s: %q is not a PID", l.PIDPath(n), data)
	}
	proc, err := os.FindProcess(pid)
	if err == nil {
		err = proc.Kill()
	}
	if err != nil {
		t.Fatalf("kill %s (pid %d): %v", local.NodeName(n), pid, err)
	}
	cluster.waitFor(t, local.NodeName(n)+" (pid "+itoa(pid)+") exited", 30*time.Second)
}

// waitReadmeCluster waits up to d until `iggo cluster status` exits 0
// with a leader and up nodes up.
func waitReadmeCluster(t *testing.T, sh *readmeShell, up int, d time.Duration) {
	t.Helper()
	var status struct {
		Leader string `json:"leader"`
		Nodes  []struct {
			Up bool `json:"up"`
		} `json:"nodes"`
	}
	deadline := time.Now().Add(d)
	for {
		out, err := sh.run("./iggo cluster status -o json")
		n := 0
		if err == nil && json.Unmarshal([]byte(out), &status) == nil && status.Leader != "" {
			for _, nd := range status.Nodes {
				if nd.Up {
					n++
				}
			}
			if n == up {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster status after %s: %v, %d node(s) up, want %d with a leader:\n%s", d, err, n, up, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// The Go SDK snippet's stand-ins, replaced before it is built: the
// address it dials becomes the test server's and "{ ... }" (error
// handling left to the reader) becomes "{ log.Fatal(err) }".
const (
	readmeSDKAddr    = `"127.0.0.1:8090"`
	readmeSDKElision = "{ ... }"
)

// readmeSDKMain wraps the README's Go SDK snippet in a main package; the
// snippet's last err is checked after it.
const readmeSDKMain = `package main

import (
	"context"
	"log"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

func main() {
	ctx := context.Background()
%s
	if err != nil {
		log.Fatal(err)
	}
}
`

// TestReadmeGoSDK builds the README's "## Go SDK" snippet as a main
// package (a file in a package path that does not exist in the module,
// supplied by go build -overlay, so it compiles against this checkout
// with no go.mod of its own and nothing written to the tree), runs it
// against a fresh server holding stream orders and topic eu, and checks
// that it exits 0 printing nothing (the README shows no output) and that
// its message arrived.
func TestReadmeGoSDK(t *testing.T) {
	iggoBinary(t) // -short skip; and the build below takes as long
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the snippet with")
	}
	e := newCLI(t)
	blocks := readmeBlocks(t, "## Go SDK")
	if len(blocks) != 1 || blocks[0].lang != "go" {
		t.Fatalf("README ## Go SDK: want one go block, have %d", len(blocks))
	}
	b := blocks[0]
	snippet := strings.Join(b.text, "\n")
	if strings.Count(snippet, readmeSDKAddr) != 1 || !strings.Contains(snippet, readmeSDKElision) {
		t.Fatalf("README.md:%d: the Go SDK snippet should dial %s once and elide error handling as %q:\n%s", b.line, readmeSDKAddr, readmeSDKElision, snippet)
	}
	snippet = strings.ReplaceAll(snippet, readmeSDKAddr, strconv.Quote(e.srv.Addr))
	snippet = strings.ReplaceAll(snippet, readmeSDKElision, "{ log.Fatal(err) }")
	e.ok("stream", "create", "orders")
	e.ok("topic", "create", "orders", "eu", "1")

	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "internal/readmesnippet" // absent from the module; see above
	if _, err := os.Stat(filepath.Join(root, pkg)); err == nil {
		t.Fatalf("%s exists; the overlay needs a package path of its own", pkg)
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(src, fmt.Appendf(nil, readmeSDKMain, snippet), 0o600); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, pkg, "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	exe := filepath.Join(tmp, "snippet")
	build := exec.CommandContext(ctx, goCmd, "build", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", exe, "./"+pkg)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("README.md:%d: the Go SDK snippet does not build: %v\n%s\nsource:\n%s", b.line, err, out, fmt.Sprintf(readmeSDKMain, snippet))
	}

	runCtx, cancelRun := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancelRun()
	run := exec.CommandContext(runCtx, exe)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil || stdout.Len() > 0 {
		t.Fatalf("README.md:%d: the Go SDK snippet: %v; want exit 0 and no output\nstdout:\n%s\nstderr:\n%s", b.line, err, stdout.String(), stderr.String())
	}
	if got := e.ok("poll", "orders", "eu", "--count", "10", "--raw"); got != "hello\n" {
		t.Fatalf("orders/eu after the snippet holds %q, want the one message \"hello\"", got)
	}
}
