package itest

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/httpapi"
)

// TestHTTPConcurrentWritesOneCredential: parallel control-plane writes
// and produces with one token share its session and all succeed; HTTP
// sessions never show up as clients.
func TestHTTPConcurrentWritesOneCredential(t *testing.T) {
	s, a := startHTTP(t)
	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "base"})
	a.ok(200, nil, "POST", "/streams/base/topics", topicBody("t", 1))
	const n = 16
	var wg sync.WaitGroup
	status := make([]int, 2*n)
	for i := range n {
		wg.Go(func() {
			status[i] = a.do("POST", "/streams", map[string]any{"name": fmt.Sprintf("s%d", i)}).Status
		})
		wg.Go(func() {
			status[n+i] = a.do("POST", "/streams/base/topics/t/messages", map[string]any{
				"partitioning": map[string]any{"kind": "balanced", "value": ""}, "messages": []any{map[string]any{"payload": "eA=="}}}).Status
		})
	}
	wg.Wait()
	for i, st := range status {
		want := 200
		if i >= n {
			want = 201
		}
		if st != want {
			t.Fatalf("request %d: %d", i, st)
		}
	}
	var streams []map[string]any
	a.ok(200, &streams, "GET", "/streams", nil)
	if len(streams) != n+1 {
		t.Fatalf("%d streams", len(streams))
	}
	if got := s.Broker.Sessions().Len(); got != 0 {
		t.Fatalf("HTTP sessions in the connection registry: %d", got)
	}
	var clients []any
	a.ok(200, &clients, "GET", "/clients", nil)
	if len(clients) != 0 {
		t.Fatalf("clients %v", clients)
	}
}

// TestHTTPSessionCap: live HTTP sessions are capped at clients_table_max
// / 2; a write by one more credential is 503 id 9 with Retry-After, reads
// still work, and a logout frees a place.
func TestHTTPSessionCap(t *testing.T) {
	_, a := startHTTP(t, WithConfig(func(c *config.Config) { c.Metadata.ClientsTableMax = 4 }))
	users := []*httpAPI{a, a.as(""), a.as("")}
	users[1].login(RootUsername, RootPassword)
	users[2].login(RootUsername, RootPassword)
	users[0].ok(200, nil, "POST", "/streams", map[string]any{"name": "a"})
	users[1].ok(200, nil, "POST", "/streams", map[string]any{"name": "b"})
	r := users[2].do("POST", "/streams", map[string]any{"name": "c"})
	if r.Status != 503 || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("third session: %d %s", r.Status, r.Body)
	}
	users[2].fail(503, 9, "POST", "/streams", map[string]any{"name": "c"})
	users[2].ok(200, nil, "GET", "/streams", nil)
	users[1].ok(204, nil, "DELETE", "/users/logout", nil)
	users[2].ok(200, nil, "POST", "/streams", map[string]any{"name": "c"})
}

// TestHTTPRevocationSurvivesRestart: a logged-out token stays revoked
// after a restart (configured secret, so tokens outlive the process),
// while a live token keeps working.
func TestHTTPRevocationSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s1 := Start(t, WithDir(dir), withHTTP(restartSecret))
	a := newHTTPAPI(t, s1)
	revoked := a.login(RootUsername, RootPassword)
	live := a.as("")
	live.login(RootUsername, RootPassword)
	a.ok(204, nil, "DELETE", "/users/logout", nil)
	s1.Stop()

	s2 := Start(t, WithDir(dir), withHTTP(restartSecret))
	b := newHTTPAPI(t, s2)
	b.as(revoked).fail(401, 40, "GET", "/streams", nil)
	b.as(live.token).ok(200, nil, "GET", "/streams", nil)
}

// TestHTTPRevocationFileFromBefore: the revocation file a node wrote
// before logouts went through the metadata log is still honoured: its
// jtis stay revoked after the upgrade, and a logout after it is kept by
// the metadata log across a restart.
func TestHTTPRevocationFileFromBefore(t *testing.T) {
	dir := t.TempDir()
	s1 := Start(t, WithDir(dir), withHTTP(restartSecret))
	a := newHTTPAPI(t, s1)
	before := a.login(RootUsername, RootPassword)
	cl, err := s1.Broker.HTTPAPI().Tokens().Verify(before)
	if err != nil {
		t.Fatal(err)
	}
	after := a.as("")
	after.login(RootUsername, RootPassword)
	live := a.as("")
	live.login(RootUsername, RootPassword)
	s1.Stop()

	// The file as an earlier version wrote it for a logout of before.
	old, err := httpapi.OpenRevocations(filepath.Join(dir, filepath.FromSlash(httpapi.RevocationsFile)), nil, 0, time.Hour, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.RevokeToken(cl.User, cl.JTI, cl.Expiry); err != nil {
		t.Fatal(err)
	}

	s2 := Start(t, WithDir(dir), withHTTP(restartSecret))
	b := newHTTPAPI(t, s2)
	b.as(before).fail(401, 40, "GET", "/streams", nil)
	b.as(after.token).ok(204, nil, "DELETE", "/users/logout", nil)
	b.as(live.token).ok(200, nil, "GET", "/streams", nil)
	s2.Stop()

	s3 := Start(t, WithDir(dir), withHTTP(restartSecret))
	c := newHTTPAPI(t, s3)
	c.as(before).fail(401, 40, "GET", "/streams", nil)
	c.as(after.token).fail(401, 40, "GET", "/streams", nil)
	c.as(live.token).ok(200, nil, "GET", "/streams", nil)
}

// TestHTTPWebUIAndMetrics: /ui serves the given files when web_ui is on
// (index.html for unknown paths without a dot, 404 with one); the metrics
// endpoint serves the given handler behind a bearer.
func TestHTTPWebUIAndMetrics(t *testing.T) {
	ui := fstest.MapFS{"index.html": {Data: []byte("<html>console</html>")}, "app.js": {Data: []byte("console.log(1)")}}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("http_requests_total 1\n"))
	})
	_, a := startHTTP(t, withHTTP(func(h *config.HTTPConfig) { h.WebUI = true }),
		WithBrokerOptions(broker.WithWebUI(ui), broker.WithHTTPMetrics(metrics)))
	anon := a.as("")
	for path, want := range map[string]string{"/ui": "<html>console</html>", "/ui/": "<html>console</html>", "/ui/app.js": "console.log(1)", "/ui/streams/x": "<html>console</html>"} {
		r := anon.do("GET", path, nil)
		if r.Status != 200 || string(r.Body) != want || r.Header.Get("iggy-view") != "" {
			t.Fatalf("GET %s = %d %q", path, r.Status, r.Body)
		}
	}
	if r := anon.do("GET", "/ui/missing.css", nil); r.Status != 404 {
		t.Fatalf("missing asset = %d", r.Status)
	}
	if r := anon.do("GET", "/ui/app.js", nil); r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("app.js content type %q", r.Header.Get("Content-Type"))
	}
	// The root redirects to the console.
	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, err := noFollow.Get(a.base + "/"); err != nil {
		t.Fatal(err)
	} else if res.Body.Close(); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/ui/" {
		t.Fatalf("GET / = %d, Location %q; want 302 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	if r := anon.do("GET", "/", nil); r.Status != 200 || string(r.Body) != "<html>console</html>" {
		t.Fatalf("GET / followed = %d %q", r.Status, r.Body)
	}
	anon.fail(404, 404, "GET", "/nope", nil)
	anon.fail(401, 77, "GET", "/metrics", nil)
	r := a.do("GET", "/metrics", nil)
	if r.Status != 200 || string(r.Body) != "http_requests_total 1\n" {
		t.Fatalf("metrics %d %q", r.Status, r.Body)
	}

	// web_ui off: / and /ui are 404 saying how to turn the console on.
	_, b := startHTTP(t, WithBrokerOptions(broker.WithWebUI(ui)))
	for _, path := range []string{"/", "/ui", "/ui/"} {
		e := b.as("").fail(404, 404, "GET", path, nil)
		if e.Code != "web_ui_disabled" || !strings.Contains(e.Reason, "IGGY_HTTP_WEB_UI=true") {
			t.Fatalf("GET %s with web_ui off: %+v", path, e)
		}
	}
	// Without WithHTTPMetrics the broker's registry is served, and it
	// counted the requests made so far.
	if r := b.do("GET", "/metrics", nil); r.Status != 200 || !strings.Contains(string(r.Body), "http_requests_total") {
		t.Fatalf("registry metrics %d %.200s", r.Status, r.Body)
	}
}

// TestHTTPSessionCapSweepsExpired: sessions whose token expired give
// their place to a new credential.
func TestHTTPSessionCapSweepsExpired(t *testing.T) {
	clk := newManualClock()
	_, a := startHTTP(t, WithConfig(func(c *config.Config) { c.Metadata.ClientsTableMax = 4 }),
		WithBrokerOptions(broker.WithClock(clk.Now), broker.WithAfter(clk.After)))
	b := a.as("")
	b.login(RootUsername, RootPassword)
	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "a"})
	b.ok(200, nil, "POST", "/streams", map[string]any{"name": "b"})
	c := a.as("")
	c.login(RootUsername, RootPassword)
	c.fail(503, 9, "POST", "/streams", map[string]any{"name": "c"})
	clk.Advance(50 * time.Minute)
	d := a.as("")
	d.login(RootUsername, RootPassword) // expires 50 min after a, b and c
	clk.Advance(15 * time.Minute)       // a, b, c expired; d live
	d.ok(200, nil, "POST", "/streams", map[string]any{"name": "d"})
}

// restartSecret configures a JWT secret, so tokens outlive the process.
func restartSecret(h *config.HTTPConfig) {
	h.JWT.EncodingSecret = "restart-secret-restart-secret-0123456"
}
