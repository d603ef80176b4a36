package httpapi

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// fakeTokenLog is a TokenLog over a map; code, when set, refuses
// revocations with it.
type fakeTokenLog struct {
	revoked map[string]int64
	code    uint32
}

func (l *fakeTokenLog) RevokeToken(_ auth.UserID, jti string, until int64) (uint32, error) {
	if l.code != 0 {
		return l.code, errors.New("not admitted")
	}
	l.revoked[jti] = until
	return 0, nil
}

func (l *fakeTokenLog) TokenRevoked(jti string) bool {
	_, ok := l.revoked[jti]
	return ok
}

// TestRevocationsWithLog: with a TokenLog a logout's revocation goes to
// it (kept until exp plus the skew) and nothing is kept locally; a
// refused one reports the log's code; jtis a file from before still
// holds stay revoked; the check allocates nothing.
func TestRevocationsWithLog(t *testing.T) {
	clk := newClock()
	tk := newTokens(t, clk, nil)
	path := t.TempDir() + "/rev.bin"
	a, _ := tk.Issue(1)
	old, _ := tk.Issue(1)
	b, _ := tk.Issue(1)
	ca, _ := tk.Verify(a.Token)
	cold, _ := tk.Verify(old.Token)
	cb, _ := tk.Verify(b.Token)

	// A file written before logouts went through the metadata log.
	before, err := OpenRevocations(path, clk.Now, 10, time.Hour+5*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.RevokeToken(1, cold.JTI, cold.Expiry); err != nil {
		t.Fatal(err)
	}

	log := &fakeTokenLog{revoked: map[string]int64{}}
	r, err := OpenRevocations(path, clk.Now, 10, time.Hour+5*time.Second, 5*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := r.RevokeToken(1, ca.JTI, ca.Expiry); code != 0 || err != nil {
		t.Fatalf("revoke: %d %v", code, err)
	}
	if got := log.revoked[ca.JTI]; got != ca.Expiry+5 {
		t.Fatalf("kept until %d, want exp+5 = %d", got, ca.Expiry+5)
	}
	if r.Len() != 1 { // the file's jti only
		t.Fatalf("%d entries kept locally, want the file's 1", r.Len())
	}
	if !r.Revoked(ca) || !r.Revoked(cold) || r.Revoked(cb) {
		t.Fatal("revoked: the log's jti, the file's jti, and not a live token")
	}
	log.code = wire.ErrTransientNotAccepted.Code
	if code, err := r.RevokeToken(1, cb.JTI, cb.Expiry); code != wire.ErrTransientNotAccepted.Code || err == nil || r.Revoked(cb) {
		t.Fatalf("a refused revocation: code %d err %v", code, err)
	}
	for _, c := range []Claims{ca, cold, cb} {
		if n := testing.AllocsPerRun(100, func() { _ = r.Revoked(c) }); n != 0 {
			t.Fatalf("Revoked allocates %v per call", n)
		}
	}
}

// TestLogoutThroughTheTokenLog: on a cluster follower a logout is not
// relayed (the leader named here does not exist) but committed through
// the token log; one the log does not admit answers 503 id 58 with
// Retry-After and leaves the token valid, so the retry revokes it.
func TestLogoutThroughTheTokenLog(t *testing.T) {
	log := &fakeTokenLog{revoked: map[string]int64{}, code: wire.ErrTransientNotAccepted.Code}
	s, err := newTestServerWith(t, defaultHTTP(), time.Now, func(o *Options) {
		o.Cluster = fakeCluster{Primary{Relay: "127.0.0.1:1", Advertised: "127.0.0.1:1"}}
		o.ClusterSecret = []byte(strings.Repeat("k", 32))
		o.TokenLog = log
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.tokens.Issue(0)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	w := do("DELETE", "/users/logout")
	if w.Code != 503 || !strings.Contains(w.Body.String(), `"id":58`) || w.Header().Get("Retry-After") == "" {
		t.Fatalf("logout not admitted = %d %s (Retry-After %q)", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if c := do("GET", "/config").Code; c != 404 { // 404 once authenticated: no configuration given
		t.Fatalf("token after a logout not admitted: %d", c)
	}
	log.code = 0
	if w := do("DELETE", "/users/logout"); w.Code != 204 {
		t.Fatalf("logout = %d %s", w.Code, w.Body)
	}
	if len(log.revoked) != 1 || s.Revocations().Len() != 0 {
		t.Fatalf("log holds %d, the node's own list %d; want 1 and 0", len(log.revoked), s.Revocations().Len())
	}
	if c := do("GET", "/config").Code; c != 401 {
		t.Fatalf("token after the logout: %d, want 401", c)
	}
}
