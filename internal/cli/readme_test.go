package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
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

// readmeBlocks returns the fenced blocks of the README section that
// starts with the heading named section.
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
		case !fenced && strings.HasPrefix(l, "## "):
			in = l == section
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
