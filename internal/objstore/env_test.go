package objstore_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

// noCredentials leaves the credentials to the environment.
func noCredentials(c *objstore.Config) { c.AccessKeyID, c.SecretAccessKey = "", "" }

func TestEnvironmentCredentials(t *testing.T) {
	srv := objstoretest.Start(t)
	ctx := testContext(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")

	s := newStore(t, srv, "env", noCredentials)
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check with credentials from the environment: %v", err)
	}
	put(t, s, s.Key("obj"), []byte("from env"), nil)

	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	err := newStore(t, srv, "env", noCredentials).Check(ctx)
	if !errors.Is(err, objstore.ErrAccessDenied) {
		t.Fatalf("Check with a wrong secret in the environment = %v, want ErrAccessDenied", err)
	}
	checkMessage(t, err, "tiered_storage.access_key_id: the object store refused the credentials")
	if !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("error %q does not say the credentials came from the environment", err)
	}

	// Credentials in the configuration win over the environment.
	if err := newStore(t, srv, "env").Check(ctx); err != nil {
		t.Errorf("Check with configured credentials and a wrong environment: %v", err)
	}
}

func TestEnvironmentSessionToken(t *testing.T) {
	srv := objstoretest.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "session-token-1")
	var (
		mu     sync.Mutex
		tokens []string
	)
	endpoint := hookProxy(t, srv, func(r *http.Request, _ string, _ int) {
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, r.Header.Get("X-Amz-Security-Token"))
	})
	s := newStore(t, srv, "", noCredentials, func(c *objstore.Config) { c.Endpoint = endpoint })
	// versitygw has no session tokens; whatever it answers, the request
	// must carry the token.
	_ = s.Check(testContext(t))
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) == 0 || tokens[0] != "session-token-1" {
		t.Errorf("X-Amz-Security-Token sent: %q, want session-token-1", tokens)
	}
}
