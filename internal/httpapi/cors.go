package httpapi

import (
	"net/http"
	"strings"

	"github.com/iggo-dev/iggo/internal/config"
)

// corsPolicy is [http.cors] (http-api.md §10): when enabled every OPTIONS
// request is answered here without authentication, and every other answer
// (errors included) carries the allow-origin, expose and Vary headers.
type corsPolicy struct {
	anyOrigin      bool
	origins        map[string]bool
	methods        string
	headers        string
	exposed        string
	credentials    bool
	privateNetwork bool
}

// vary is the Vary value of every CORS answer.
const vary = "origin, access-control-request-method, access-control-request-headers"

// newCORS returns the policy, nil when CORS is disabled (OPTIONS is then
// an unknown method: 405).
func newCORS(c config.HTTPCORSConfig) *corsPolicy {
	if !c.Enabled {
		return nil
	}
	p := &corsPolicy{origins: map[string]bool{}, credentials: c.AllowCredentials, privateNetwork: c.AllowPrivateNetwork}
	origins := c.AllowedOrigins.Clean()
	if len(origins) > 0 && origins[0] == "*" {
		p.anyOrigin = true
	}
	for _, o := range origins {
		p.origins[o] = true
	}
	var methods []string
	for _, m := range c.AllowedMethods.Clean() {
		methods = append(methods, strings.ToUpper(m))
	}
	p.methods = strings.Join(methods, ",")
	p.headers = strings.Join(c.AllowedHeaders.Clean(), ",")
	p.exposed = strings.Join(c.ExposedHeaders.Clean(), ",")
	return p
}

// allowOrigin is the Access-Control-Allow-Origin value for origin ("" =
// none).
func (p *corsPolicy) allowOrigin(origin string) string {
	if p.anyOrigin {
		return "*"
	}
	if origin != "" && p.origins[origin] {
		return origin
	}
	return ""
}

// handle stamps the CORS headers; it answers an OPTIONS request itself
// (200, empty) and returns true then.
func (p *corsPolicy) handle(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Set("Vary", vary)
	if o := p.allowOrigin(r.Header.Get("Origin")); o != "" {
		h.Set("Access-Control-Allow-Origin", o)
	}
	if p.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if r.Method != http.MethodOptions {
		if p.exposed != "" {
			h.Set("Access-Control-Expose-Headers", p.exposed)
		}
		return false
	}
	if p.methods != "" {
		h.Set("Access-Control-Allow-Methods", p.methods)
	}
	if p.headers != "" {
		h.Set("Access-Control-Allow-Headers", p.headers)
	}
	if p.privateNetwork && r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return true
}
