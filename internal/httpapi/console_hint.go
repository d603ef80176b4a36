package httpapi

import "net/http"

// consolePath is where the web console is served when http.web_ui is on.
const consolePath = "/ui/"

// consoleOn reports whether the web console is served.
func (s *Server) consoleOn() bool { return s.opts.WebUI != nil && s.cfg.WebUI }

// errConsoleOff answers / and /ui while the console is off: 404 with the
// JSON error body, whose reason says how to turn the console on.
func errConsoleOff() *apiError {
	return httpError(http.StatusNotFound, "web_ui_disabled",
		"The web console is off: start the server with http.web_ui = true (IGGY_HTTP_WEB_UI=true) and open /ui/. "+
			"This address serves the HTTP API; GET /openapi.json describes it.")
}

// root answers GET /: a redirect to the console when it is on, else the
// hint of errConsoleOff.
func (c *call) root() error {
	if !c.s.consoleOn() {
		return errConsoleOff()
	}
	http.Redirect(c.w, c.r, consolePath, http.StatusFound)
	return nil
}
