package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
)

func serve(s *Server, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func TestCORSPreflight(t *testing.T) {
	clk := newClock()
	var observed []int
	cfg := defaultHTTP()
	s := testServer(t, cfg, clk.Now)
	s.opts.Observe = func(_, _ string, status int, _ time.Duration) { observed = append(observed, status) }
	w := serve(s, http.MethodOptions, "/streams", map[string]string{"Origin": "http://x", "Access-Control-Request-Method": "POST"})
	if w.Code != 200 || w.Body.Len() != 0 {
		t.Fatalf("preflight %d %q", w.Code, w.Body.String())
	}
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Methods") != "GET,POST,PUT,DELETE" ||
		h.Get("Access-Control-Allow-Headers") != "content-type,authorization" || h.Get("Vary") != vary {
		t.Fatalf("preflight headers %v", h)
	}
	// Every OPTIONS, even on an unknown path, without auth.
	if w := serve(s, http.MethodOptions, "/nope", nil); w.Code != 200 {
		t.Fatalf("OPTIONS /nope = %d", w.Code)
	}
	// Errors carry the CORS headers too.
	w = serve(s, http.MethodGet, "/streams", map[string]string{"Origin": "http://x"})
	if w.Code != 401 || w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Access-Control-Expose-Headers") != "iggy-view" {
		t.Fatalf("error answer %d %v", w.Code, w.Header())
	}
	if len(observed) != 3 {
		t.Fatalf("observed %v, want 3 requests (preflights counted)", observed)
	}
}

func TestCORSListedOrigins(t *testing.T) {
	cfg := defaultHTTP()
	cfg.CORS.AllowedOrigins = config.StringList{" http://a ", "", "http://b"}
	cfg.CORS.AllowCredentials = true
	s := testServer(t, cfg, newClock().Now)
	w := serve(s, http.MethodOptions, "/streams", map[string]string{"Origin": "http://b"})
	if w.Header().Get("Access-Control-Allow-Origin") != "http://b" || w.Header().Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("listed origin: %v", w.Header())
	}
	w = serve(s, http.MethodOptions, "/streams", map[string]string{"Origin": "http://c"})
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unlisted origin echoed: %v", w.Header())
	}
}

func TestCORSDisabled(t *testing.T) {
	cfg := defaultHTTP()
	cfg.CORS.Enabled = false
	s := testServer(t, cfg, newClock().Now)
	w := serve(s, http.MethodOptions, "/streams", nil)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("OPTIONS with CORS off = %d %v", w.Code, w.Header())
	}
}

func TestCORSConfigValidation(t *testing.T) {
	for name, mod := range map[string]func(*config.Config){
		"wildcard not first":        func(c *config.Config) { c.HTTP.CORS.AllowedOrigins = config.StringList{"http://a", "*"} },
		"credentials with wildcard": func(c *config.Config) { c.HTTP.CORS.AllowCredentials = true },
		"odd method":                func(c *config.Config) { c.HTTP.CORS.AllowedMethods = config.StringList{"FETCH"} },
		"bad algorithm":             func(c *config.Config) { c.HTTP.JWT.Algorithm = "RS256" },
		"metrics endpoint":          func(c *config.Config) { c.HTTP.Metrics.Endpoint = "metrics" },
		"tls without files":         func(c *config.Config) { c.HTTP.TLS.Enabled, c.HTTP.TLS.CertFile = true, "" },
		"bad base64 secret":         func(c *config.Config) { c.HTTP.JWT.UseBase64Secret, c.HTTP.JWT.EncodingSecret = true, "%%%" },
	} {
		c := config.Default()
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := config.Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
}
