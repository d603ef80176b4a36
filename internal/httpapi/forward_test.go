package httpapi

import (
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
)

// fakeCluster names a fixed leader.
type fakeCluster struct{ p Primary }

func (f fakeCluster) Primary(netip.Addr) (Primary, bool) { return f.p, f.p.Self || f.p.Relay != "" }
func (f fakeCluster) View() uint32                       { return 3 }

// followerOf returns a server whose cluster leader is at relay, and a
// valid bearer for it.
func followerOf(t *testing.T, relay string) (*Server, string) {
	t.Helper()
	now := time.Now
	s, err := newTestServerWith(t, defaultHTTP(), now, func(o *Options) {
		o.Cluster = fakeCluster{Primary{Relay: relay, Advertised: relay}}
		o.ClusterSecret = []byte(strings.Repeat("k", 32))
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.tokens.Issue(0)
	if err != nil {
		t.Fatal(err)
	}
	return s, tok.Token
}

func relayedPost(t *testing.T, s *Server, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", "/streams", strings.NewReader(`{"name":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

// TestRelayRetriesANodeThatNoLongerLeads: the first receiver refuses as a
// follower, the retry is answered; the answer, its view and body are the
// leader's, and the relayed request carries the marker, bearer and body.
func TestRelayRetriesANodeThatNoLongerLeads(t *testing.T) {
	var calls atomic.Int32
	var gotBody, gotAuth, gotMark string
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set(notPrimaryHeader, "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		gotBody, gotAuth, gotMark = string(b), r.Header.Get("Authorization"), r.Header.Get(forwardedHeader)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Iggy-View", "9")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	defer leader.Close()
	s, tok := followerOf(t, strings.TrimPrefix(leader.URL, "http://"))
	s.forward.retry = 10 * time.Millisecond
	w := relayedPost(t, s, tok)
	if w.Code != 200 || w.Body.String() != `{"id":1}` || w.Header().Get("Iggy-View") != "9" {
		t.Fatalf("relayed answer %d %q view %q", w.Code, w.Body, w.Header().Get("Iggy-View"))
	}
	if calls.Load() != 2 || gotBody != `{"name":"x"}` || gotAuth != "Bearer "+tok || gotMark != "1" {
		t.Fatalf("leader saw %d calls, body %q, auth %q, marker %q", calls.Load(), gotBody, gotAuth, gotMark)
	}

	// A bad bearer never leaves the follower.
	if w := relayedPost(t, s, "nope"); w.Code != 401 || calls.Load() != 2 {
		t.Fatalf("bad bearer: %d after %d leader calls", w.Code, calls.Load())
	}
}

// TestRelayUnreachableAndBusy: a leader that refuses connections answers
// 503 no_reachable_primary once the budget is spent; with every relay slot
// taken the answer is 503 forward_busy at once.
func TestRelayUnreachableAndBusy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, tok := followerOf(t, addr)
	s.forward.budget, s.forward.retry = 300*time.Millisecond, 20*time.Millisecond
	w := relayedPost(t, s, tok)
	if w.Code != 503 || !strings.Contains(w.Body.String(), "no_reachable_primary") || w.Header().Get("Retry-After") == "" {
		t.Fatalf("unreachable leader: %d %s", w.Code, w.Body)
	}
	for range forwardSlots {
		s.forward.slots <- struct{}{}
	}
	if w := relayedPost(t, s, tok); w.Code != 503 || !strings.Contains(w.Body.String(), "forward_busy") {
		t.Fatalf("all slots taken: %d %s", w.Code, w.Body)
	}
}

// TestRelayOverTLSChecksTheChain: a leader whose certificate chains to
// this node's certificate file is relayed to; one that does not is
// refused at once (the bearer is never sent).
func TestRelayOverTLSChecksTheChain(t *testing.T) {
	var calls atomic.Int32
	leader := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer leader.Close()
	pemFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leader.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	s, tok := followerOf(t, strings.TrimPrefix(leader.URL, "https://"))
	s.forward = newForwarder(true, filepath.Join(t.TempDir(), "absent.pem"))
	if w := relayedPost(t, s, tok); w.Code != 503 || !strings.Contains(w.Body.String(), "no_reachable_primary") || calls.Load() != 0 {
		t.Fatalf("untrusted leader: %d %s after %d leader calls", w.Code, w.Body, calls.Load())
	}
	s.forward = newForwarder(true, pemFile)
	if w := relayedPost(t, s, tok); w.Code != 204 || calls.Load() != 1 {
		t.Fatalf("trusted leader: %d %s after %d leader calls", w.Code, w.Body, calls.Load())
	}
}

// TestTokenEndsWithPasswordChange: a token carries its user's password
// stamp; once the stored password hash changes (through any protocol, on
// any node: the store is replicated metadata) the token is refused, while
// a token without the claim is still accepted.
func TestTokenEndsWithPasswordChange(t *testing.T) {
	s := testServer(t, defaultHTTP(), time.Now)
	store := s.authn.Store().(*auth.MemStore)
	root, ok := store.UserByName("iggy")
	if !ok {
		t.Fatal("no root user")
	}
	id, err := s.identity(root.ID)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.tokens.Issue(root.ID)
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string) int {
		req := httptest.NewRequest("GET", "/config", nil) // 404 once authenticated: no configuration given
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code
	}
	if c := get(id.AccessToken.Token); c != 404 {
		t.Fatalf("fresh token: %d", c)
	}
	root.PasswordHash += "x" // a new hash, as a password change stores
	store.PutUser(root)
	if c := get(id.AccessToken.Token); c != 401 {
		t.Fatalf("token after the password changed: %d, want 401", c)
	}
	// Nor can it be refreshed into a token of the new password.
	req := httptest.NewRequest("POST", "/users/refresh-token", strings.NewReader(`{"token":"`+id.AccessToken.Token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != 401 {
		t.Fatalf("refresh of a token issued before the password changed: %d %s, want 401", w.Code, w.Body)
	}
	if c := get(plain.Token); c != 404 {
		t.Fatalf("token without a password stamp: %d", c)
	}
	// The check runs on every request: it allocates nothing.
	stamp := PasswordStamp(root.PasswordHash)
	if n := testing.AllocsPerRun(100, func() { _ = stampMatches(stamp, root.PasswordHash) }); n != 0 || !stampMatches(stamp, root.PasswordHash) {
		t.Fatalf("stampMatches: %.1f allocations per call (or no match)", n)
	}
}
