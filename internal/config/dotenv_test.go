package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithDotEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my.env")
	content := "# comment\nIGGY_TCP_ADDRESS=127.0.0.1:1\nexport IGGY_SYSTEM_PATH=\"/data dir\"\nIGGY_HEARTBEAT_INTERVAL='5 s'\n\nIGGY_ROOT_USERNAME=fromfile\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := WithDotEnv([]string{"IGGY_ENV_PATH=" + path, "IGGY_ROOT_USERNAME=fromenv"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"IGGY_ENV_PATH=" + path, "IGGY_ROOT_USERNAME=fromenv", "IGGY_TCP_ADDRESS=127.0.0.1:1", "IGGY_SYSTEM_PATH=/data dir", "IGGY_HEARTBEAT_INTERVAL=5 s"}
	if d := cmp.Diff(want, env); d != "" {
		t.Fatalf("environ (-want +got):\n%s", d)
	}
	if _, err := WithDotEnv([]string{"IGGY_ENV_PATH=" + filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("explicit missing env file accepted")
	}
	bad := filepath.Join(dir, "bad.env")
	if err := os.WriteFile(bad, []byte("just words\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WithDotEnv([]string{"IGGY_ENV_PATH=" + bad}); err == nil {
		t.Fatal("malformed env file accepted")
	}
	t.Chdir(dir)
	if env, err := WithDotEnv(nil); err != nil || len(env) != 0 {
		t.Fatalf("no .env in the working directory: %v %v", env, err)
	}
}

func FuzzParseDotEnv(f *testing.F) {
	f.Add([]byte("A=1\nexport B='x y'\n# c\n"))
	f.Add([]byte("C=\"q\"\n\nD=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vars, err := ParseDotEnv(data)
		if err != nil {
			return
		}
		// Each parsed variable re-parses to itself when written back
		// (quoted, so surrounding spaces and quotes survive).
		for _, kv := range vars {
			k, v, _ := strings.Cut(kv, "=")
			again, err := ParseDotEnv([]byte(k + "='" + v + "'\n"))
			if err != nil || len(again) != 1 || again[0] != kv {
				t.Fatalf("%q re-parsed as %q, %v", kv, again, err)
			}
		}
	})
}
