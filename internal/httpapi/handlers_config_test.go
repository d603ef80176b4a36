package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// TestHTTPConfigDocumentMasksEverySecret sets every secret of the schema
// (config.SecretKeys) to a distinct value and checks that none appears in
// the document and each key holds config.Masked.
func TestHTTPConfigDocumentMasksEverySecret(t *testing.T) {
	c := config.Default()
	c.HTTP.JWT.EncodingSecret = "unit-secret-http-jwt-encoding-0123456789"
	c.HTTP.JWT.DecodingSecret = "unit-secret-http-jwt-decoding-0123456789"
	c.Cluster.Auth.SharedSecret = "unit-secret-cluster-shared-0123456789abc"
	c.Cluster.Auth.PreviousSharedSecret = "unit-secret-cluster-previous-0123456789"
	c.System.Encryption.Key = "unit-secret-encryption-key-0123456789abcd"
	c.TieredStorage.AccessKeyID = "unit-secret-tiered-access-key-id-012345"
	c.TieredStorage.SecretAccessKey = "unit-secret-tiered-secret-access-key-0123"
	keys := config.SecretKeys()
	if len(keys) != 7 {
		t.Fatalf("the schema has secrets %v; set each one above", keys)
	}
	doc, err := configDocument(c)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "unit-secret") {
		t.Fatalf("a secret leaked: %s", data)
	}
	for _, k := range keys {
		var cur any = doc
		for _, part := range strings.Split(k, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("%s: not an object at %q", k, part)
			}
			cur = m[part]
		}
		if cur != config.Masked {
			t.Errorf("%s = %v, want %q", k, cur, config.Masked)
		}
	}
	if tcp, ok := doc["tcp"].(map[string]any); !ok || tcp["address"] != c.TCP.Address {
		t.Fatalf("tcp table %v", doc["tcp"])
	}
}

// TestHTTPConfigRoute: 401 without a bearer, 404 when no configuration
// was given, 200 with the document for the root user.
func TestHTTPConfigRoute(t *testing.T) {
	s := testServer(t, defaultHTTP(), newClock().Now)
	tok, err := s.Tokens().Issue(auth.RootUserID)
	if err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"Authorization": "Bearer " + tok.Token}
	if w := serve(s, http.MethodGet, "/config", nil); w.Code != 401 {
		t.Fatalf("no bearer: %d", w.Code)
	}
	if w := serve(s, http.MethodGet, "/config", bearer); w.Code != 404 {
		t.Fatalf("no configuration: %d %s", w.Code, w.Body)
	}
	c := config.Default()
	c.HTTP.JWT.EncodingSecret = "route-secret-0123456789abcdef0123456789"
	s.opts.EffectiveConfig = func() config.Config { return c }
	w := serve(s, http.MethodGet, "/config", bearer)
	if w.Code != 200 || strings.Contains(w.Body.String(), "route-secret") || !strings.Contains(w.Body.String(), `"encoding_secret":"******"`) {
		t.Fatalf("GET /config = %d %s", w.Code, w.Body)
	}
}

// TestHTTPConsumerKindParse: the two kinds by exact name; anything else
// is refused.
func TestHTTPConsumerKindParse(t *testing.T) {
	for in, want := range map[string]bool{"consumer": true, "consumer_group": true, "": false, "group": false, "Consumer_Group": false, "2": false} {
		if _, ok := parseConsumerKind(in); ok != want {
			t.Errorf("parseConsumerKind(%q) ok = %v", in, ok)
		}
	}
	var k ConsumerKind
	if err := json.Unmarshal([]byte(`"consumer_group"`), &k); err != nil || k != kindConsumerGroup || k.echo() != "consumer_group" || k.consumer(wire.NamedID("g")).Kind != 2 {
		t.Fatalf("consumer_group: %q %v", k, err)
	}
	if err := json.Unmarshal([]byte(`2`), &k); err == nil {
		t.Fatal("a number was accepted as consumer_kind")
	}
	if kindConsumer.echo() != "" || kindConsumer.consumer(wire.NamedID("c")).Kind != 1 {
		t.Fatal("the consumer kind is not the reference's")
	}
}
