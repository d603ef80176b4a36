package objstore_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

// newStore returns a Store for srv with the given prefix, after mutate
// (if any) changed the configuration.
func newStore(t testing.TB, srv *objstoretest.Server, prefix string, mutate ...func(*objstore.Config)) *objstore.Store {
	t.Helper()
	cfg := srv.Config(prefix)
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := objstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randomBytes returns n pseudo-random bytes determined by seed.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// testContext returns a context that ends with the test or after a minute.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// put uploads data under key and fails the test on error.
func put(t testing.TB, s *objstore.Store, key string, data []byte, meta map[string]string) objstore.Info {
	t.Helper()
	info, err := s.Put(testContext(t), key, bytes.NewReader(data), int64(len(data)), meta)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}
