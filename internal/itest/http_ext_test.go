package itest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// extPerms is a permissions body with only the named global permissions.
func extPerms(names ...string) map[string]any {
	g := map[string]any{}
	for _, k := range []string{"manage_servers", "read_servers", "manage_users", "read_users", "manage_streams",
		"read_streams", "manage_topics", "read_topics", "poll_messages", "send_messages"} {
		g[k] = false
	}
	for _, n := range names {
		g[n] = true
	}
	return map[string]any{"global": g, "streams": nil}
}

// extUser creates a user with the given global permissions over a and
// returns a client logged in as that user.
func extUser(t *testing.T, a *httpAPI, name string, perms ...string) *httpAPI {
	t.Helper()
	a.ok(200, nil, "POST", "/users", map[string]any{"username": name, "password": "password-" + name, "status": "active", "permissions": extPerms(perms...)})
	u := a.as("")
	u.login(name, "password-"+name)
	return u
}

// jsonPath walks a decoded JSON object along keys.
func jsonPath(t *testing.T, doc map[string]any, keys ...string) any {
	t.Helper()
	var cur any = doc
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %v is not an object", strings.Join(keys, "."), cur)
		}
		if cur, ok = m[k]; !ok {
			t.Fatalf("%s: no key %q in %v", strings.Join(keys, "."), k, m)
		}
	}
	return cur
}

// TestHTTPConfigExtension: GET /config answers the effective
// configuration as nested JSON with the bound addresses, the JWT and
// cluster secrets masked (never their values), and follows the
// server_info rule: 401 without a bearer, 403 id 41 without read_servers
// or manage_servers.
func TestHTTPConfigExtension(t *testing.T) {
	const jwtSecret = "ext-jwt-secret-never-shown-0123456789abcdef"
	const clusterSecret = "ext-cluster-secret-never-shown-0123456789"
	s, a := startHTTP(t, withHTTP(func(h *config.HTTPConfig) {
		h.JWT.EncodingSecret, h.JWT.DecodingSecret = jwtSecret, jwtSecret
	}), WithConfig(func(c *config.Config) { c.Cluster.Auth.SharedSecret = clusterSecret }))

	r := a.ok(200, nil, "GET", "/config", nil)
	for _, secret := range []string{jwtSecret, clusterSecret, "never-shown"} {
		if bytes.Contains(r.Body, []byte(secret)) {
			t.Fatalf("GET /config leaks a secret (%q): %s", secret, r.Body)
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	for _, k := range []string{"encoding_secret", "decoding_secret"} {
		if v := jsonPath(t, doc, "http", "jwt", k); v != config.Masked {
			t.Fatalf("http.jwt.%s = %v, want %q", k, v, config.Masked)
		}
	}
	if v := jsonPath(t, doc, "cluster", "auth", "shared_secret"); v != config.Masked {
		t.Fatalf("cluster.auth.shared_secret = %v", v)
	}
	// An unset secret stays empty (nothing to mask).
	if v := jsonPath(t, doc, "cluster", "auth", "previous_shared_secret"); v != "" {
		t.Fatalf("cluster.auth.previous_shared_secret = %v", v)
	}
	// Bound addresses, as in runtime/current_config.toml.
	if v := jsonPath(t, doc, "http", "address"); v != s.Broker.HTTPAddr().String() {
		t.Fatalf("http.address = %v, bound %s", v, s.Broker.HTTPAddr())
	}
	if v := jsonPath(t, doc, "tcp", "address"); v != s.Addr {
		t.Fatalf("tcp.address = %v, bound %s", v, s.Addr)
	}
	if v := jsonPath(t, doc, "http", "enabled"); v != true {
		t.Fatalf("http.enabled = %v", v)
	}
	if v := jsonPath(t, doc, "system", "path"); v != s.Dir {
		t.Fatalf("system.path = %v, want %s", v, s.Dir)
	}
	if _, ok := jsonPath(t, doc, "http", "cors").(map[string]any); !ok {
		t.Fatal("http.cors is not a nested object")
	}

	// Authentication and the server_info rule.
	a.as("").fail(401, wire.ErrAccessTokenMissing.Code, "GET", "/config", nil)
	a.as("not-a-token").fail(401, wire.ErrUnauthenticated.Code, "GET", "/config", nil)
	plain := extUser(t, a, "plain", "read_streams", "read_users", "poll_messages")
	plain.fail(403, wire.ErrUnauthorized.Code, "GET", "/config", nil)
	reader := extUser(t, a, "reader", "read_servers")
	if r := reader.ok(200, nil, "GET", "/config", nil); bytes.Contains(r.Body, []byte(jwtSecret)) {
		t.Fatal("GET /config leaks the JWT secret to a read_servers user")
	}
	manager := extUser(t, a, "manager", "manage_servers")
	manager.ok(200, nil, "GET", "/config", nil)
	// Permissions are read per request: revoking read_servers denies the
	// same token at once.
	a.ok(204, nil, "PUT", "/users/reader/permissions", map[string]any{"permissions": extPerms("read_streams")})
	reader.fail(403, wire.ErrUnauthorized.Code, "GET", "/config", nil)

	// The route is in the OpenAPI document.
	var spec struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	a.ok(200, &spec, "GET", "/openapi.json", nil)
	if _, ok := spec.Paths["/config"]["get"]; !ok {
		t.Fatal("GET /config is not in /openapi.json")
	}
}

// extOffset is the GET .../consumer-offsets reply, consumer_kind kept
// apart so its absence is visible.
type extOffset struct {
	PartitionID   uint32 `json:"partition_id"`
	CurrentOffset uint64 `json:"current_offset"`
	StoredOffset  uint64 `json:"stored_offset"`
}

// getOffsetRaw reads an offset over HTTP and returns the decoded reply
// and its top-level keys.
func getOffsetRaw(t *testing.T, a *httpAPI, query string) (extOffset, map[string]json.RawMessage) {
	t.Helper()
	r := a.ok(200, nil, "GET", "/streams/ext/topics/t/consumer-offsets?"+query, nil)
	var o extOffset
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &o); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.Body, &keys); err != nil {
		t.Fatal(err)
	}
	return o, keys
}

// TestHTTPConsumerGroupOffsets: the consumer_kind=consumer_group extension
// reads a group's offset (stored by a member over the binary protocol),
// echoes "consumer_kind":"consumer_group", keeps groups and plain
// consumers with the same id apart, leaves the plain reply's shape
// unchanged, and applies the binary rules to writes: an HTTP credential
// is never a group member, so a group offset store or delete over HTTP is
// refused exactly as for a non-member binary client (404 id 20) and the
// stored offset is untouched.
func TestHTTPConsumerGroupOffsets(t *testing.T) {
	s, a := startHTTP(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sdk, err := client.Dial(ctx, s.Addr, client.WithCredentials(RootUsername, RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer sdk.Close()

	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "ext"})
	a.ok(200, nil, "POST", "/streams/ext/topics", topicBody("t", 2))
	msgs := make([]any, 5)
	for i := range msgs {
		msgs[i] = map[string]any{"payload": "aGVsbG8="}
	}
	a.ok(201, nil, "POST", "/streams/ext/topics/t/messages", map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": "AAAAAA=="}, "messages": msgs})
	var group map[string]any
	a.ok(200, &group, "POST", "/streams/ext/topics/t/consumer-groups", map[string]any{"name": "workers"})
	gid := num(t, group["id"])

	sid, tid, gname := wire.NamedID("ext"), wire.NamedID("t"), wire.NamedID("workers")
	if err := sdk.JoinConsumerGroup(ctx, sid, tid, gname); err != nil {
		t.Fatal(err)
	}
	if err := sdk.StoreConsumerOffset(ctx, wire.GroupConsumer(gname), sid, tid, wire.SomePartition(0), 3); err != nil {
		t.Fatalf("SDK group store: %v", err)
	}

	// Read over HTTP by name and by numeric id.
	for _, id := range []string{"workers", fmt.Sprint(gid)} {
		o, keys := getOffsetRaw(t, a, "consumer_kind=consumer_group&consumer_id="+id+"&partition_id=0")
		if o.StoredOffset != 3 || o.CurrentOffset != 4 || o.PartitionID != 0 {
			t.Fatalf("group offset by %s = %+v, want stored 3 current 4", id, o)
		}
		if string(keys["consumer_kind"]) != `"consumer_group"` {
			t.Fatalf("group reply by %s does not echo the kind: %v", id, keys)
		}
	}
	// Partition 1 has no group offset.
	a.fail(404, 404, "GET", "/streams/ext/topics/t/consumer-offsets?consumer_kind=consumer_group&consumer_id=workers&partition_id=1", nil)
	// Unknown group.
	a.fail(404, 404, "GET", "/streams/ext/topics/t/consumer-offsets?consumer_kind=consumer_group&consumer_id=nobody&partition_id=0", nil)

	// A plain consumer with the group's numeric id is another offset; its
	// reply has the reference's shape (no consumer_kind), with the kind
	// defaulted and given explicitly.
	plainQ := fmt.Sprintf("consumer_id=%d&partition_id=0", gid)
	a.fail(404, 404, "GET", "/streams/ext/topics/t/consumer-offsets?"+plainQ, nil)
	a.ok(204, nil, "PUT", "/streams/ext/topics/t/consumer-offsets", map[string]any{"consumer_id": gid, "partition_id": 0, "offset": 1})
	for _, q := range []string{plainQ, "consumer_kind=consumer&" + plainQ} {
		o, keys := getOffsetRaw(t, a, q)
		if o.StoredOffset != 1 {
			t.Fatalf("plain offset (%s) = %+v, want 1", q, o)
		}
		if len(keys) != 3 || keys["consumer_kind"] != nil {
			t.Fatalf("plain reply keys %v, want exactly partition_id, current_offset, stored_offset", keys)
		}
	}
	if o, _ := getOffsetRaw(t, a, "consumer_kind=consumer_group&consumer_id=workers&partition_id=0"); o.StoredOffset != 3 {
		t.Fatalf("the plain store changed the group offset: %+v", o)
	}

	// Writes run the binary command with consumer kind 2, under the
	// binary group rules: not a member -> 404 id 20, nothing changed.
	e := a.fail(404, wire.ErrResourceNotFound.Code, "PUT", "/streams/ext/topics/t/consumer-offsets",
		map[string]any{"consumer_kind": "consumer_group", "consumer_id": "workers", "partition_id": 0, "offset": 0})
	if e.Code != "resource_not_found" {
		t.Fatalf("group store over HTTP: %+v", e)
	}
	a.fail(404, wire.ErrResourceNotFound.Code, "DELETE", "/streams/ext/topics/t/consumer-offsets/workers?consumer_kind=consumer_group&partition_id=0", nil)
	got, err := sdk.GetConsumerOffset(ctx, wire.GroupConsumer(gname), sid, tid, wire.SomePartition(0))
	if err != nil || got == nil || got.StoredOffset != 3 {
		t.Fatalf("SDK group offset after refused HTTP writes: %+v, %v", got, err)
	}
	// The plain DELETE still removes only the plain offset.
	a.ok(204, nil, "DELETE", fmt.Sprintf("/streams/ext/topics/t/consumer-offsets/%d?consumer_kind=consumer&partition_id=0", gid), nil)
	a.fail(404, 404, "GET", "/streams/ext/topics/t/consumer-offsets?"+plainQ, nil)

	// The member moves the offset and deletes it over the binary
	// protocol; HTTP sees each step.
	if err := sdk.StoreConsumerOffset(ctx, wire.GroupConsumer(wire.NumericID(uint32(gid))), sid, tid, wire.SomePartition(0), 4); err != nil {
		t.Fatal(err)
	}
	if o, _ := getOffsetRaw(t, a, "consumer_kind=consumer_group&consumer_id=workers&partition_id=0"); o.StoredOffset != 4 {
		t.Fatalf("group offset after the SDK store = %+v, want 4", o)
	}
	if err := sdk.DeleteConsumerOffset(ctx, wire.GroupConsumer(gname), sid, tid, wire.SomePartition(0)); err != nil {
		t.Fatal(err)
	}
	a.fail(404, 404, "GET", "/streams/ext/topics/t/consumer-offsets?consumer_kind=consumer_group&consumer_id=workers&partition_id=0", nil)

	// Bad kinds; permissions are the binary ones (poll rights, which
	// read_streams and read_topics imply).
	a.fail(400, 400, "GET", "/streams/ext/topics/t/consumer-offsets?consumer_kind=group&consumer_id=workers&partition_id=0", nil)
	a.fail(400, 400, "DELETE", "/streams/ext/topics/t/consumer-offsets/workers?consumer_kind=Consumer_Group&partition_id=0", nil)
	a.fail(422, 422, "PUT", "/streams/ext/topics/t/consumer-offsets", map[string]any{"consumer_kind": "group", "consumer_id": "workers", "partition_id": 0, "offset": 0})
	a.fail(422, 422, "PUT", "/streams/ext/topics/t/consumer-offsets", map[string]any{"consumer_kind": 2, "consumer_id": "workers", "partition_id": 0, "offset": 0})
	if err := sdk.StoreConsumerOffset(ctx, wire.GroupConsumer(gname), sid, tid, wire.SomePartition(0), 2); err != nil {
		t.Fatal(err)
	}
	viewer := extUser(t, a, "viewer", "read_users", "read_servers", "send_messages")
	viewer.fail(403, wire.ErrUnauthorized.Code, "GET", "/streams/ext/topics/t/consumer-offsets?consumer_kind=consumer_group&consumer_id=workers&partition_id=0", nil)
	poller := extUser(t, a, "poller", "poll_messages")
	if o, _ := getOffsetRaw(t, poller, "consumer_kind=consumer_group&consumer_id=workers&partition_id=0"); o.StoredOffset != 2 {
		t.Fatalf("a non-member user with poll rights reads %+v, want 2", o)
	}
}
