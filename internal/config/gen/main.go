// Command gen writes the example configuration (deploy/config.toml):
// every key of the schema with its default, each commented with the doc
// comment of its field in the config package source and its IGGY_*
// variable. Run it with `go generate ./internal/config`; a test fails
// when the file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iggo-dev/iggo/internal/config"
)

// header opens the generated file.
const header = `Iggo server configuration: every key with its default value.

Generated from the configuration schema by 'go generate ./internal/config';
do not edit by hand. Keys and environment names are the reference's
(Apache Iggy's config.toml), so an existing file works unchanged; keys this
server does not use are accepted and reported at start. Layers, later wins:
defaults, this file (--config or IGGY_CONFIG_PATH), IGGY_* environment
variables, command-line flags. See docs/OPERATIONS.md.`

func main() {
	src := flag.String("src", ".", "directory of the config package source")
	out := flag.String("o", "", "output file (standard output when empty)")
	flag.Parse()
	data, err := generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(data)
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generate renders the defaults with the doc comments found in src.
func generate(src string) ([]byte, error) {
	docs, err := fieldDocs(src)
	if err != nil {
		return nil, err
	}
	def := config.Default()
	return config.Render(&def, config.RenderOptions{Header: header, Docs: docs, EnvNames: true})
}

// fieldDocs reads the doc comments of the struct types and their fields
// in the non-test Go files of dir: "Type" and "Type.Field" keys.
func fieldDocs(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	sort.Strings(files)
	fset := token.NewFileSet()
	docs := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				docs[ts.Name.Name] = clean(doc.Text())
				for _, fld := range st.Fields.List {
					text := fld.Doc.Text()
					if text == "" {
						text = fld.Comment.Text()
					}
					for _, n := range fld.Names {
						docs[ts.Name.Name+"."+n.Name] = clean(text)
					}
				}
			}
		}
	}
	return docs, nil
}

// clean joins a doc comment's wrapped lines into paragraphs kept at the
// source's line breaks, without trailing space.
func clean(s string) string {
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString(strings.TrimRight(line, " \t"))
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}
