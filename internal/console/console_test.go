package console

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// htmlRef finds src/href attributes in index.html.
var htmlRef = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// jsImport finds the static imports of an ES module.
var jsImport = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'`)

// unsafeSink finds DOM APIs that parse HTML from strings; the console builds
// every node with createElement/createTextNode instead.
var unsafeSink = regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(`)

func TestIndexAndEveryReferencedAssetAreEmbedded(t *testing.T) {
	fsys := FS()
	index, err := fs.ReadFile(fsys, "index.html")
	if err != nil {
		t.Fatalf("index.html: %v", err)
	}
	var queue []string
	for _, m := range htmlRef.FindAllStringSubmatch(string(index), -1) {
		ref := m[1]
		if !strings.HasPrefix(ref, "/ui/") {
			t.Errorf("index.html references %q: want an absolute /ui/ path", ref)
			continue
		}
		queue = append(queue, strings.TrimPrefix(ref, "/ui/"))
	}
	if len(queue) < 3 {
		t.Fatalf("index.html references %d assets, want the icon, style sheet and app module: %v", len(queue), queue)
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Errorf("referenced asset %s is not embedded: %v", name, err)
			continue
		}
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, m := range jsImport.FindAllStringSubmatch(string(data), -1) {
			spec := m[1] + m[2]
			if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
				t.Errorf("%s imports %q: only relative module paths are servable", name, spec)
				continue
			}
			queue = append(queue, path.Join(path.Dir(name), spec))
		}
	}
	for _, want := range []string{"js/app.js", "js/bigjson.js", "js/pages/messages.js", "style.css"} {
		if !seen[want] {
			t.Errorf("%s is not reachable from index.html", want)
		}
	}
}

func TestEveryEmbeddedModuleIsReachable(t *testing.T) {
	// A module that nothing imports is dead weight or a forgotten wiring.
	fsys := FS()
	reach := map[string]bool{"js/app.js": true}
	queue := []string{"js/app.js"}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, m := range jsImport.FindAllStringSubmatch(string(data), -1) {
			dep := path.Join(path.Dir(name), m[1]+m[2])
			if !reach[dep] {
				reach[dep] = true
				queue = append(queue, dep)
			}
		}
	}
	err := fs.WalkDir(fsys, "js", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".js") && !reach[p] {
			t.Errorf("%s is embedded but no module imports it", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNoHTMLStringSinks(t *testing.T) {
	err := fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		data, err := fs.ReadFile(FS(), p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "*") {
				continue
			}
			if unsafeSink.MatchString(line) {
				t.Errorf("%s:%d uses an HTML/script string sink: %s", p, i+1, trimmed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestIndexCarriesTheContentSecurityPolicy(t *testing.T) {
	index, err := fs.ReadFile(FS(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]+)"`).FindSubmatch(index)
	if m == nil {
		t.Fatal("index.html has no Content-Security-Policy meta element")
	}
	meta := string(m[1])
	// The header adds frame-ancestors, which a meta element cannot carry.
	if want := strings.TrimSuffix(ContentSecurityPolicy, "; frame-ancestors 'none'"); meta != want {
		t.Errorf("meta CSP = %q\nwant      %q", meta, want)
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*"} {
		if strings.Contains(meta, bad) {
			t.Errorf("CSP allows %s", bad)
		}
	}
}
