package replication

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: the replication room (this package and its subpackages)
// imports no other part of the server but the wire package's status
// codes, the file layer (internal/fileio, the seam where tests inject
// disk errors) and the system calls without thread hand-offs
// (internal/rawio): the broker assembles it from the configuration and gives
// each group its state machine.
func TestImports(t *testing.T) {
	const module = "github.com/iggo-dev/iggo/"
	allowed := []string{module + "wire", module + "internal/fileio", module + "internal/rawio", module + "internal/replication"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || p == a || strings.HasPrefix(p, a+"/")
			}
			if !ok {
				t.Errorf("%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
