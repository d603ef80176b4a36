package metadata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerLogsTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "iggy-server.log")
	var b strings.Builder
	for b.Len() < maxLogTailBytes+4096 {
		b.WriteString("time=x level=INFO msg=\"filler line\"\n")
	}
	b.WriteString("time=y level=INFO msg=\"the last line\"\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := string(serverLogs(path))
	if !strings.HasSuffix(got, "msg=\"the last line\"\n") {
		t.Fatalf("tail does not end with the last line: %q", got[max(len(got)-80, 0):])
	}
	if len(got) > maxLogTailBytes+200 {
		t.Fatalf("tail is %d bytes, want at most about %d", len(got), maxLogTailBytes)
	}
	body := got[strings.IndexByte(got, '\n')+1:]
	if !strings.HasPrefix(body, "time=") {
		t.Fatalf("tail starts mid-line: %q", body[:40])
	}
	if strings.Contains(got, "no log files are kept") {
		t.Fatal("still says no log files are kept")
	}
}

func TestServerLogsOffOrMissing(t *testing.T) {
	if got := string(serverLogs("")); !strings.Contains(got, "file_enabled") {
		t.Fatalf("log file off: %q", got)
	}
	missing := filepath.Join(t.TempDir(), "none.log")
	if got := string(serverLogs(missing)); !strings.Contains(got, missing) {
		t.Fatalf("missing file: %q", got)
	}
}
