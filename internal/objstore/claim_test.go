package objstore_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

func TestClaim(t *testing.T) {
	srv := objstoretest.Start(t)
	ctx := testContext(t)
	s := newStore(t, srv, "cluster")

	if err := objstore.Claim(ctx, s, "server-a"); err != nil {
		t.Fatalf("first Claim: %v", err)
	}
	raw, err := s.GetSmall(ctx, s.Key(objstore.OwnerMarker), 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Owner, Created string }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("marker %q: %v", raw, err)
	}
	if _, err := time.Parse(time.RFC3339, doc.Created); doc.Owner != "server-a" || err != nil {
		t.Errorf("marker %s", raw)
	}
	if err := objstore.Claim(ctx, s, "server-a"); err != nil {
		t.Errorf("Claim by the same owner: %v", err)
	}

	err = objstore.Claim(ctx, newStore(t, srv, "cluster"), "server-b")
	if !errors.Is(err, objstore.ErrForeignOwner) {
		t.Fatalf("Claim by another owner = %v, want ErrForeignOwner", err)
	}
	checkMessage(t, err, `tiered_storage.prefix: the bucket prefix "cluster" already holds another Iggo server's objects (owner server-a, this server server-b); choose another prefix`)

	// Another prefix of the same bucket is free.
	if err := objstore.Claim(ctx, newStore(t, srv, "cluster-b"), "server-b"); err != nil {
		t.Errorf("Claim of another prefix: %v", err)
	}
	if err := objstore.Claim(ctx, s, ""); err == nil {
		t.Error("Claim with an empty owner accepted")
	}
}

func TestClaimUnreadableMarker(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "")
	put(t, s, s.Key(objstore.OwnerMarker), []byte("not json"), nil)
	err := objstore.Claim(testContext(t), s, "server-a")
	if !errors.Is(err, objstore.ErrForeignOwner) {
		t.Fatalf("Claim over an unreadable marker = %v, want ErrForeignOwner", err)
	}
	checkMessage(t, err, "tiered_storage.prefix: the ownership marker")
}

// TestClaimRace: another server writes its marker between Claim's read
// (no marker yet) and Claim's write. The write, conditional on the key
// being absent, is refused, and Claim reports the other owner instead of
// overwriting its marker.
func TestClaimRace(t *testing.T) {
	srv := objstoretest.Start(t)
	direct := newStore(t, srv, "race")
	key := direct.Key(objstore.OwnerMarker)
	var once sync.Once
	var raceErr error
	endpoint := hookProxy(t, srv, func(r *http.Request, k string, status int) {
		if r.Method == http.MethodGet && k == key && status == http.StatusNotFound {
			once.Do(func() { raceErr = objstore.Claim(testContext(t), direct, "server-a") })
		}
	})
	s := newStore(t, srv, "race", func(c *objstore.Config) { c.Endpoint = endpoint })
	err := objstore.Claim(testContext(t), s, "server-b")
	if raceErr != nil {
		t.Fatalf("the racing Claim: %v", raceErr)
	}
	if !errors.Is(err, objstore.ErrForeignOwner) {
		t.Fatalf("Claim that lost the race = %v, want ErrForeignOwner", err)
	}
	checkMessage(t, err, "tiered_storage.prefix: the bucket prefix \"race\" already holds another Iggo server's objects (owner server-a, this server server-b)")
}
