package itest

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestHTTPStreamsTopicsMessages drives every stream, topic, partition,
// segment, consumer-group, message and offset route to success.
func TestHTTPStreamsTopicsMessages(t *testing.T) {
	_, a := startHTTP(t)

	var sd map[string]any
	a.ok(200, &sd, "POST", "/streams", map[string]any{"name": "orders"})
	if sd["name"] != "orders" || sd["size"] != "0 B" || sd["topics"] == nil {
		t.Fatalf("created stream %v", sd)
	}
	var streams []map[string]any
	a.ok(200, &streams, "GET", "/streams", nil)
	if len(streams) != 1 || streams[0]["name"] != "orders" {
		t.Fatalf("streams %v", streams)
	}
	a.ok(204, nil, "PUT", "/streams/orders", map[string]any{"name": "orders2"})
	a.ok(200, &sd, "GET", "/streams/0", nil)
	if sd["name"] != "orders2" {
		t.Fatalf("renamed stream %v", sd)
	}

	var td map[string]any
	a.ok(200, &td, "POST", "/streams/0/topics", map[string]any{"name": "t", "partitions_count": 2, "compression_algorithm": "gzip",
		"message_expiry": 60_000_000, "max_topic_size": 0, "options": map[string]string{"segment_size": "16 MiB"}})
	if td["compression_algorithm"] != "gzip" || num(t, td["message_expiry"]) != 60_000_000 || len(td["partitions"].([]any)) != 2 {
		t.Fatalf("created topic %v", td)
	}
	opts := td["options"].(map[string]any)
	if seg := opts["segment_size"].(map[string]any); seg["explicit"] != true {
		t.Fatalf("segment_size option %v", seg)
	}
	var topics []map[string]any
	a.ok(200, &topics, "GET", "/streams/orders2/topics", nil)
	if len(topics) != 1 {
		t.Fatalf("topics %v", topics)
	}
	a.ok(204, nil, "PUT", "/streams/0/topics/t", map[string]any{"name": "t2", "compression_algorithm": "none"})
	a.ok(200, &td, "GET", "/streams/0/topics/t2", nil)
	if td["compression_algorithm"] != "none" {
		t.Fatalf("updated topic %v", td)
	}
	a.ok(204, nil, "PUT", "/streams/0/topics/t2", map[string]any{"name": "t2", "options": map[string]string{"local_retention_size": "2 GiB", "local_retention_age": "1 day"}})
	a.ok(200, &td, "GET", "/streams/0/topics/t2", nil)
	opts = td["options"].(map[string]any)
	if lr := opts["local_retention_size"].(map[string]any); lr["explicit"] != true || lr["value"] != "2 GiB" {
		t.Fatalf("local_retention_size option %v", lr)
	}
	a.fail(400, 4041, "PUT", "/streams/0/topics/t2", map[string]any{"name": "t2", "options": map[string]string{"segment_size": "16 MiB"}})

	// Partitions and segments.
	r := a.ok(200, nil, "POST", "/streams/0/topics/0/partitions", map[string]any{"partitions_count": 2})
	if len(r.Body) != 0 {
		t.Fatalf("create partitions body %q", r.Body)
	}
	a.ok(204, nil, "DELETE", "/streams/0/topics/0/partitions?partitions_count=1", nil)
	a.ok(200, &td, "GET", "/streams/0/topics/0", nil)
	if num(t, td["partitions_count"]) != 3 {
		t.Fatalf("partitions after +2 -1: %v", td["partitions_count"])
	}
	a.ok(204, nil, "DELETE", "/streams/0/topics/0/partitions/0?segments_count=1", nil)

	// Produce: ids 0 (minted), a u128 above 2^64, explicit headers.
	hdrVal := base64.StdEncoding.EncodeToString([]byte{42, 0, 0, 0})
	body := map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": base64.StdEncoding.EncodeToString([]byte{1, 0, 0, 0})},
		"messages": []any{
			map[string]any{"payload": base64.StdEncoding.EncodeToString([]byte("hello")),
				"user_headers": []any{map[string]any{"key": map[string]any{"kind": "string", "value": base64.StdEncoding.EncodeToString([]byte("k"))},
					"value": map[string]any{"kind": "uint32", "value": hdrVal}}}},
			map[string]any{"id": "340282366920938463463374607431768211455", "payload": base64.StdEncoding.EncodeToString([]byte("world"))},
			map[string]any{"id": json.Number("18446744073709551615"), "payload": base64.StdEncoding.EncodeToString([]byte("!"))},
		},
	}
	var conf struct {
		Confirmations []struct {
			PartitionID uint32 `json:"partition_id"`
			BaseOffset  uint64 `json:"base_offset"`
		} `json:"confirmations"`
	}
	r = a.ok(201, &conf, "POST", "/streams/0/topics/0/messages", body)
	if r.Header.Get("iggy-durability") != "replicated-memory" || len(conf.Confirmations) != 1 || conf.Confirmations[0].PartitionID != 1 {
		t.Fatalf("produce reply %s %v", r.Body, r.Header)
	}
	r = a.ok(202, nil, "POST", "/streams/0/topics/0/messages?ack=none", body)
	if r.Header.Get("iggy-durability") != "none" || len(r.Body) != 0 {
		t.Fatalf("ack=none reply %q %v", r.Body, r.Header)
	}

	// Poll: u128 and u64 ids come back exactly (checked on the raw text).
	r = a.ok(200, nil, "GET", "/streams/0/topics/0/messages?partition_id=1&kind=offset&value=0&count=10", nil)
	raw := string(r.Body)
	for _, want := range []string{`"id":340282366920938463463374607431768211455`, `"id":18446744073709551615`, `"payload":"aGVsbG8="`,
		`"user_headers":[{"key":{"kind":"string","value":"aw=="},"value":{"kind":"uint32","value":"` + hdrVal + `"}}]`} {
		if !strings.Contains(raw, want) {
			t.Fatalf("poll reply lacks %s:\n%s", want, raw)
		}
	}
	var polled struct {
		PartitionID   uint32 `json:"partition_id"`
		CurrentOffset uint64 `json:"current_offset"`
		Count         uint32 `json:"count"`
		Messages      []struct {
			Header struct {
				Offset        uint64 `json:"offset"`
				PayloadLength uint32 `json:"payload_length"`
			} `json:"header"`
			Payload string `json:"payload"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &polled); err != nil {
		t.Fatal(err)
	}
	if polled.PartitionID != 1 || polled.Count != 6 || polled.CurrentOffset != 5 || polled.Messages[5].Header.Offset != 5 || polled.Messages[1].Header.PayloadLength != 5 {
		t.Fatalf("poll %+v", polled)
	}
	a.ok(200, &polled, "GET", "/streams/0/topics/0/messages?partition_id=1&kind=last&count=1", nil)
	if polled.Count != 1 || polled.Messages[0].Header.Offset != 5 {
		t.Fatalf("poll last %+v", polled)
	}

	// Balanced and keyed and keyed produce.
	bal := map[string]any{"partitioning": map[string]any{"kind": "balanced", "value": ""}, "messages": []any{map[string]any{"payload": "eA=="}}}
	a.ok(201, nil, "POST", "/streams/0/topics/0/messages", bal)
	key := map[string]any{"partitioning": map[string]any{"kind": "messages_key", "value": "a2V5"}, "messages": []any{map[string]any{"payload": "eA=="}}}
	a.ok(201, nil, "POST", "/streams/0/topics/0/messages", key)

	// Offsets: poll with auto_commit, then read, store and delete.
	a.ok(200, nil, "GET", "/streams/0/topics/0/messages?consumer_id=9&partition_id=1&kind=first&count=2&auto_commit=true", nil)
	var off struct {
		PartitionID   uint32 `json:"partition_id"`
		CurrentOffset uint64 `json:"current_offset"`
		StoredOffset  uint64 `json:"stored_offset"`
	}
	a.ok(200, &off, "GET", "/streams/0/topics/0/consumer-offsets?consumer_id=9&partition_id=1", nil)
	if off.StoredOffset != 1 || off.CurrentOffset < 5 {
		t.Fatalf("auto-committed offset %+v", off)
	}
	a.ok(204, nil, "PUT", "/streams/0/topics/0/consumer-offsets", map[string]any{"consumer_id": "reader", "partition_id": 1, "offset": 3})
	a.ok(200, &off, "GET", "/streams/0/topics/0/consumer-offsets?consumer_id=reader&partition_id=1", nil)
	if off.StoredOffset != 3 {
		t.Fatalf("stored offset %+v", off)
	}
	a.ok(204, nil, "DELETE", "/streams/0/topics/0/consumer-offsets/reader?partition_id=1", nil)
	a.fail(404, 404, "GET", "/streams/0/topics/0/consumer-offsets?consumer_id=reader&partition_id=1", nil)

	// Consumer groups.
	var gd map[string]any
	a.ok(200, &gd, "POST", "/streams/0/topics/0/consumer-groups", map[string]any{"name": "g"})
	if gd["name"] != "g" || gd["members"] == nil {
		t.Fatalf("group %v", gd)
	}
	var groups []map[string]any
	a.ok(200, &groups, "GET", "/streams/0/topics/0/consumer-groups", nil)
	if len(groups) != 1 {
		t.Fatalf("groups %v", groups)
	}
	a.ok(200, &gd, "GET", "/streams/0/topics/0/consumer-groups/g", nil)
	a.ok(204, nil, "DELETE", "/streams/0/topics/0/consumer-groups/0", nil)
	a.fail(404, 5000, "GET", "/streams/0/topics/0/consumer-groups/g", nil)

	// Purges and deletes.
	a.ok(204, nil, "DELETE", "/streams/0/topics/0/purge", nil)
	a.ok(200, &td, "GET", "/streams/0/topics/0", nil)
	if num(t, td["messages_count"]) != 0 {
		t.Fatalf("purged topic %v", td["messages_count"])
	}
	a.ok(204, nil, "DELETE", "/streams/0/purge", nil)
	a.ok(204, nil, "DELETE", "/streams/0/topics/0", nil)
	a.fail(404, 2010, "GET", "/streams/0/topics/0", nil)
	a.ok(204, nil, "DELETE", "/streams/0", nil)
	a.fail(404, 1009, "GET", "/streams/0", nil)
}

// TestHTTPUsersAndTokens covers the user, permission, password and PAT
// routes, PAT login, raw PATs as bearers, refresh and logout.
func TestHTTPUsersAndTokens(t *testing.T) {
	_, a := startHTTP(t)
	perms := map[string]any{"global": map[string]any{"manage_servers": false, "read_servers": false, "manage_users": false, "read_users": false,
		"manage_streams": false, "read_streams": true, "manage_topics": false, "read_topics": false, "poll_messages": false, "send_messages": false},
		"streams": nil}
	var ud map[string]any
	a.ok(200, &ud, "POST", "/users", map[string]any{"username": "alice", "password": "secret1", "status": "active", "permissions": perms})
	if ud["username"] != "alice" || ud["status"] != "active" || ud["permissions"] == nil {
		t.Fatalf("created user %v", ud)
	}
	id := num(t, ud["id"])
	var users []map[string]any
	a.ok(200, &users, "GET", "/users", nil)
	if len(users) != 2 {
		t.Fatalf("users %v", users)
	}
	a.ok(200, &ud, "GET", "/users/alice", nil)
	a.ok(204, nil, "PUT", "/users/alice", map[string]any{"username": "alice2"})
	a.ok(200, &ud, "GET", "/users/alice2", nil)
	if num(t, ud["id"]) != id {
		t.Fatalf("renamed user %v", ud)
	}
	perms["global"].(map[string]any)["manage_streams"] = true
	perms["streams"] = map[string]any{"5": map[string]any{"manage_stream": true, "read_stream": true, "manage_topics": false, "read_topics": false,
		"poll_messages": true, "send_messages": false, "topics": map[string]any{"2": map[string]any{"manage_topic": false, "read_topic": true, "poll_messages": true, "send_messages": true}}}}
	a.ok(204, nil, "PUT", "/users/alice2/permissions", map[string]any{"permissions": perms})
	a.ok(200, &ud, "GET", "/users/alice2", nil)
	p := ud["permissions"].(map[string]any)
	if p["global"].(map[string]any)["manage_streams"] != true || p["streams"].(map[string]any)["5"].(map[string]any)["topics"].(map[string]any)["2"] == nil {
		t.Fatalf("permissions %v", p)
	}

	// Alice: her own token; /users/me; she may create a stream but not users.
	alice := a.as("")
	aliceTok := alice.login("alice2", "secret1")
	alice.ok(200, &ud, "GET", "/users/me", nil)
	if ud["username"] != "alice2" {
		t.Fatalf("/users/me %v", ud)
	}
	alice.ok(200, nil, "POST", "/streams", map[string]any{"name": "hers"})
	alice.fail(403, 41, "GET", "/users", nil)
	alice.fail(403, 41, "POST", "/users", map[string]any{"username": "bob", "password": "secret1", "status": "active"})

	// Refresh: a new token, the old one stays valid.
	var ref struct {
		AccessToken struct {
			Token string `json:"token"`
		} `json:"access_token"`
	}
	alice.as("").ok(200, &ref, "POST", "/users/refresh-token", map[string]any{"token": aliceTok})
	if ref.AccessToken.Token == "" || ref.AccessToken.Token == aliceTok {
		t.Fatalf("refresh %+v", ref)
	}
	alice.ok(200, nil, "GET", "/streams", nil)

	// PATs: create, list, PAT login, raw PAT as bearer, delete.
	var raw struct {
		Token string `json:"token"`
	}
	alice.ok(200, &raw, "POST", "/personal-access-tokens", map[string]any{"name": "ci-token", "expiry": 0})
	if len(raw.Token) == 0 {
		t.Fatal("empty PAT")
	}
	var pats []map[string]any
	alice.ok(200, &pats, "GET", "/personal-access-tokens", nil)
	if len(pats) != 1 || pats[0]["name"] != "ci-token" || pats[0]["expiry_at"] != nil {
		t.Fatalf("PATs %v", pats)
	}
	var pl struct {
		UserID      uint32 `json:"user_id"`
		AccessToken struct {
			Token string `json:"token"`
		} `json:"access_token"`
	}
	a.as("").ok(200, &pl, "POST", "/personal-access-tokens/login", map[string]any{"token": raw.Token})
	if uint64(pl.UserID) != id {
		t.Fatalf("PAT login %+v", pl)
	}
	patBearer := a.as(raw.Token)
	patBearer.ok(200, &ud, "GET", "/users/me", nil)
	patBearer.ok(200, nil, "POST", "/streams", map[string]any{"name": "via-pat"})
	alice.ok(204, nil, "DELETE", "/personal-access-tokens/ci-token", nil)
	patBearer.fail(401, 40, "GET", "/streams", nil)
	a.as("").fail(401, 53, "POST", "/personal-access-tokens/login", map[string]any{"token": raw.Token})

	// Password change revokes alice's earlier tokens (both of them).
	alice.fail(400, 42, "PUT", "/users/alice2/password", map[string]any{"current_password": "wrong-one", "new_password": "secret2"})
	alice.ok(204, nil, "PUT", "/users/alice2/password", map[string]any{"current_password": "secret1", "new_password": "secret2"})
	alice.fail(401, 40, "GET", "/streams", nil)
	a.as(ref.AccessToken.Token).fail(401, 40, "GET", "/streams", nil)
	a.as("").fail(401, 42, "POST", "/users/login", map[string]any{"username": "alice2", "password": "secret1"})
	fresh := a.as("")
	fresh.login("alice2", "secret2")
	fresh.ok(200, nil, "GET", "/streams", nil)

	// Logout revokes the token; both verbs answer 204.
	fresh.ok(204, nil, "DELETE", "/users/logout", nil)
	fresh.fail(401, 40, "GET", "/streams", nil)
	again := a.as("")
	again.login("alice2", "secret2")
	again.ok(204, nil, "POST", "/users/logout", nil)
	again.fail(401, 40, "GET", "/streams", nil)

	// Inactive user, then delete.
	a.ok(204, nil, "PUT", "/users/alice2", map[string]any{"status": "inactive"})
	a.as("").fail(401, 42, "POST", "/users/login", map[string]any{"username": "alice2", "password": "secret2"})
	a.ok(204, nil, "DELETE", "/users/alice2", nil)
	a.fail(404, 404, "GET", "/users/alice2", nil)
	a.fail(400, 48, "DELETE", "/users/0", nil)
}

// TestHTTPSystemRoutes covers /ping, /stats, /snapshot, /cluster/metadata,
// /options and /clients (HTTP sessions never appear there).
func TestHTTPSystemRoutes(t *testing.T) {
	s, a := startHTTP(t)
	r := a.as("").do("GET", "/ping", nil)
	if r.Status != 200 || string(r.Body) != "pong" || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" || r.Header.Get("iggy-view") != "" {
		t.Fatalf("ping %d %q %v", r.Status, r.Body, r.Header)
	}
	// A write creates the credential's session; it must not be a client.
	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "s"})
	c := s.Dial(t)
	c.LoginRoot()
	var st map[string]any
	a.ok(200, &st, "GET", "/stats", nil)
	if num(t, st["streams_count"]) != 1 || num(t, st["clients_count"]) != 1 {
		t.Fatalf("stats %v", st)
	}
	if _, ok := st["memory_usage"].(string); !ok {
		t.Fatalf("memory_usage %T", st["memory_usage"])
	}
	var clients []map[string]any
	a.ok(200, &clients, "GET", "/clients", nil)
	if len(clients) != 1 || clients[0]["transport"] != "TCP" {
		t.Fatalf("clients %v", clients)
	}
	if clients[0]["user_id"] == nil {
		t.Fatalf("logged-in client without user_id: %v", clients[0])
	}
	// A connection that has not logged in has user_id null.
	anonConn := s.Dial(t)
	_ = anonConn
	var two []map[string]any
	a.ok(200, &two, "GET", "/clients", nil)
	if len(two) != 2 || two[1]["user_id"] != nil {
		t.Fatalf("clients with an anonymous connection %v", two)
	}
	cid := num(t, clients[0]["client_id"])
	var cd map[string]any
	a.ok(200, &cd, "GET", "/clients/"+itoa(cid), nil)
	if num(t, cd["client_id"]) != cid || cd["consumer_groups"] == nil {
		t.Fatalf("client %v", cd)
	}
	a.fail(404, 100, "GET", "/clients/4000000", nil)
	a.fail(400, 400, "GET", "/clients/x", nil)

	var cm struct {
		Name  string `json:"name"`
		Nodes []struct {
			Role      string         `json:"role"`
			Status    string         `json:"status"`
			Endpoints map[string]int `json:"endpoints"`
		} `json:"nodes"`
	}
	a.ok(200, &cm, "GET", "/cluster/metadata", nil)
	if len(cm.Nodes) != 1 || cm.Nodes[0].Role != "leader" || cm.Nodes[0].Status != "healthy" || cm.Nodes[0].Endpoints["tcp"] == 0 {
		t.Fatalf("cluster metadata %+v", cm)
	}
	var optsList []map[string]any
	a.ok(200, &optsList, "GET", "/options/topic", nil)
	if len(optsList) == 0 || optsList[0]["kind"] == nil {
		t.Fatalf("options %v", optsList)
	}
	if _, ok := optsList[0]["default_value"].([]any); !ok {
		t.Fatalf("default_value %T", optsList[0]["default_value"])
	}
	a.fail(400, 3, "GET", "/options/nope", nil)

	r = a.do("POST", "/snapshot", map[string]any{"compression": "Deflated", "snapshot_types": []string{"Test", "ServerConfig"}})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/zip" || !strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="iggy_snapshot_`) {
		t.Fatalf("snapshot %d %v", r.Status, r.Header)
	}
	if _, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body))); err != nil {
		t.Fatalf("snapshot is not a zip: %v", err)
	}
	a.fail(422, 422, "POST", "/snapshot", map[string]any{"compression": "Rar", "snapshot_types": []string{"All"}})

	// HEAD answers like GET without a body.
	req, _ := http.NewRequest("HEAD", a.base+"/ping", nil)
	resp, err := a.c.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /ping: %v %v", resp, err)
	}
	resp.Body.Close()
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
