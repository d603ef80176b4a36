package httpapi

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testServer builds a Server over an in-memory session plane with a root
// user iggy/iggy.
func testServer(t *testing.T, cfg config.HTTPConfig, now func() time.Time) *Server {
	t.Helper()
	s, err := newTestServer(t, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testServerErr returns New's error for cfg (nil when it succeeded).
func testServerErr(t *testing.T, cfg config.HTTPConfig) error {
	t.Helper()
	_, err := newTestServer(t, cfg, newClock().Now)
	return err
}

func newTestServer(t testing.TB, cfg config.HTTPConfig, now func() time.Time) (*Server, error) {
	t.Helper()
	return newTestServerWith(t, cfg, now, nil)
}

// newTestServerWith is newTestServer with mod applied to the options.
func newTestServerWith(t testing.TB, cfg config.HTTPConfig, now func() time.Time, mod func(*Options)) (*Server, error) {
	t.Helper()
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	store := auth.NewMemStore()
	root, err := auth.NewRootUser(h, "iggy", "iggy")
	if err != nil {
		return nil, err
	}
	store.PutUser(root)
	table := session.NewClientTable(16, nil)
	authn := auth.NewAuthenticator(store, h, now)
	m := session.NewManager(authn, session.NewMemLog(now, table.Apply), table, session.Options{Now: now})
	d := dispatch.New(m, store, dispatch.Options{})
	o := Options{Config: cfg, Dispatcher: d, Authenticator: authn, ClientsTableMax: 16, Now: now, DataDir: t.TempDir()}
	if mod != nil {
		mod(&o)
	}
	return New(o)
}

func defaultHTTP() config.HTTPConfig { return config.Default().HTTP }

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }

func newReq(method, path string) *http.Request { return httptest.NewRequest(method, path, nil) }
