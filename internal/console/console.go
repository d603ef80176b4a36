// Package console embeds Iggo's web console: a client-side application of
// plain ES modules, HTML and CSS (no build step) that talks only to the HTTP
// API with the signed-in user's JWT. The HTTP server serves FS under /ui
// when http.web_ui is on; see docs/CONSOLE.md.
package console

import (
	"embed"
	"io/fs"
)

// assets is the console's file tree, ui/index.html at its root after Sub
// (ui/package.json only marks the modules as ES modules for Node and is not
// served).
//
//go:embed ui/index.html ui/style.css ui/icon.svg ui/js
var assets embed.FS

// ContentSecurityPolicy is the policy the console is written for; index.html
// carries it as a meta element, and the server should also send it as the
// Content-Security-Policy header on /ui responses (frame-ancestors only
// takes effect as a header).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'"

// FS returns the console's files with index.html at the root, ready to be
// served under /ui/.
func FS() fs.FS {
	sub, err := fs.Sub(assets, "ui")
	if err != nil {
		// fs.Sub fails only for an invalid path name; "ui" is valid.
		panic("console: embedded assets: " + err.Error())
	}
	return sub
}
