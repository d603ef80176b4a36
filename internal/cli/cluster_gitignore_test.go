package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The default cluster directory holds shared_secret; the repository's
// .gitignore must keep it out of commits, as it does local_data/.
func TestGitignoreCoversDefaultDirs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for l := range strings.Lines(string(b)) {
		lines[strings.TrimSpace(l)] = true
	}
	for _, dir := range []string{DefaultClusterDir, "./local_data"} {
		want := "/" + filepath.Base(dir) + "/"
		if !lines[want] {
			t.Errorf(".gitignore lacks %q", want)
		}
	}
}
