package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServerDamagedMetadata runs the real binary on a data directory whose
// metadata journal has a flipped byte: the start fails with exit 1 and one
// line naming the file and the recovery steps (no stack trace), and both
// steps work: restoring the metadata directory from a backup brings the
// streams back; moving the metadata and streams directories aside starts
// the server empty with the old files kept.
func TestServerDamagedMetadata(t *testing.T) {
	bin := iggoBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	meta, streams := filepath.Join(data, "metadata"), filepath.Join(data, "streams")
	listening := regexp.MustCompile(`msg="iggo server listening" transport=tcp address=(\S+)`)
	start := func() (*serverProc, string) {
		t.Helper()
		p := startServerProc(t, serverEnv, bin, "server", "--data-path", data, "--tcp-address", "127.0.0.1:0")
		p.waitLog(t, "iggo server ready", time.Minute)
		m := listening.FindStringSubmatch(p.stderr.String())
		if m == nil {
			t.Fatalf("no listening address in:\n%s", p.stderr.String())
		}
		return p, m[1]
	}
	cliEnv := []string{EnvConfig + "=" + filepath.Join(t.TempDir(), "contexts.toml"), "HOME=" + t.TempDir()}
	run := func(addr string, args ...string) binRun {
		t.Helper()
		return runBinary(t, bin, append([]string{EnvAddr + "=" + addr}, cliEnv...), "", args...)
	}
	ok := func(addr string, args ...string) string {
		t.Helper()
		r := run(addr, args...)
		if r.code != 0 {
			t.Fatalf("iggo %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}

	p, addr := start()
	ok(addr, "stream", "create", "kept")
	ok(addr, "topic", "create", "kept", "t", "1")
	ok(addr, "send", "kept", "t", "hello")
	// A crash (no final snapshot): the journal alone holds the metadata.
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	backup := filepath.Join(t.TempDir(), "metadata-backup")
	copyTree(t, meta, backup)
	journal := filepath.Join(meta, "journal-00000000000000000001.log")
	damage := func() {
		t.Helper()
		b, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		b[20] ^= 0x08 // inside the first record, which is not the last
		if err := os.WriteFile(journal, b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	damage()
	r := failedStart(t, bin, data)
	wantOneLine(t, r, ExitError, "metadata file "+journal+" is damaged", "restore "+meta+" from a backup",
		"mv "+meta+" "+meta+".damaged", "mv "+streams+" "+streams+".damaged", `"Damaged metadata" in docs/OPERATIONS.md`)
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("stack trace on a damaged metadata file: %s", r.stderr)
	}
	damaged := filepath.Join(t.TempDir(), "metadata-damaged")
	copyTree(t, meta, damaged)

	t.Run("restore from a backup", func(t *testing.T) {
		if err := os.RemoveAll(meta); err != nil {
			t.Fatal(err)
		}
		copyTree(t, backup, meta)
		p, addr := start()
		if got := ok(addr, "poll", "kept", "t", "-p", "0", "--offset", "0", "--raw"); got != "hello\n" {
			t.Fatalf("poll after restoring the backup = %q", got)
		}
		if err := p.stop(t, time.Minute); err != nil {
			t.Fatalf("stop: %v", err)
		}
	})

	t.Run("start empty", func(t *testing.T) {
		// The clean stop above wrote a snapshot that covers the damaged
		// journal; put the damaged directory back.
		if err := os.RemoveAll(meta); err != nil {
			t.Fatal(err)
		}
		copyTree(t, damaged, meta)
		if r := failedStart(t, bin, data); r.code != ExitError {
			t.Fatalf("start on damaged metadata: exit %d, %s", r.code, r.stderr)
		}
		for _, d := range []string{meta, streams} {
			if err := os.Rename(d, d+".damaged"); err != nil {
				t.Fatal(err)
			}
		}
		p, addr := start()
		if out := ok(addr, "stream", "list"); strings.Contains(out, "kept") {
			t.Fatalf("stream list after starting empty:\n%s", out)
		}
		if err := p.stop(t, time.Minute); err != nil {
			t.Fatalf("stop: %v", err)
		}
		// The old partition files are still there to salvage.
		logs, _ := filepath.Glob(filepath.Join(streams+".damaged", "*", "topics", "*", "partitions", "*", "*.log"))
		if len(logs) == 0 {
			t.Fatal("no segment files kept in the moved streams directory")
		}
	})
}

// failedStart runs `iggo server` on data and waits up to a minute for it
// to exit (a start that succeeds fails the test).
func failedStart(t *testing.T, bin, data string) binRun {
	t.Helper()
	p := startServerProc(t, serverEnv, bin, "server", "--data-path", data, "--tcp-address", "127.0.0.1:0")
	select {
	case err := <-p.exited:
		r := binRun{stderr: p.stderr.String()}
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			r.code = ee.ExitCode()
		}
		return r
	case <-time.After(time.Minute):
		t.Fatalf("the server did not stop on damaged metadata; stderr:\n%s", p.stderr.String())
		return binRun{}
	}
}

// copyTree copies the regular files of directory src (recursively) to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o750)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o640)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
