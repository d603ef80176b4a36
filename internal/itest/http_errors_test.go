package itest

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/iggo-dev/iggo/internal/broker"
)

// TestHTTPAuthErrors: missing, malformed, expired, foreign-key and
// revoked bearers, and no permission.
func TestHTTPAuthErrors(t *testing.T) {
	clk := newManualClock()
	_, a := startHTTP(t, WithBrokerOptions(broker.WithClock(clk.Now), broker.WithAfter(clk.After)))
	anon := a.as("")
	anon.fail(401, 77, "GET", "/streams", nil)
	anon.fail(401, 77, "GET", "/streams", nil, "Authorization", "Basic aWdneTppZ2d5")
	anon.fail(401, 77, "GET", "/streams", nil, "Authorization", "bearer "+a.token)
	anon.fail(401, 40, "GET", "/streams", nil, "Authorization", "Bearer not-a-token")
	// Auth is checked before the body and the path.
	anon.fail(401, 40, "POST", "/streams/%FF/topics", "{not json", "Authorization", "Bearer x")
	// Metrics need a bearer too.
	anon.fail(401, 77, "GET", "/metrics", nil)

	foreign := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"jti": "01930000-0000-7000-8000-000000000000", "iss": "iggy.apache.org",
		"aud": "iggy.apache.org", "sub": "0", "iat": clk.Now().Unix(), "nbf": clk.Now().Unix(), "exp": clk.Now().Unix() + 3600})
	signed, _ := foreign.SignedString([]byte("some-other-key-some-other-key-123456"))
	a.as(signed).fail(401, 40, "GET", "/streams", nil)

	// Expiry follows the broker's clock: 1 h + 5 s skew.
	a.ok(200, nil, "GET", "/streams", nil)
	clk.Advance(time.Hour + 4*time.Second)
	a.ok(200, nil, "GET", "/streams", nil)
	clk.Advance(2 * time.Second)
	a.fail(401, 40, "GET", "/streams", nil)
	a.as("").fail(401, 40, "POST", "/users/refresh-token", map[string]any{"token": a.token})
	a.login(RootUsername, RootPassword)

	// Revoked by logout.
	tok := a.token
	a.ok(204, nil, "DELETE", "/users/logout", nil)
	a.as(tok).fail(401, 40, "GET", "/streams", nil)
	a.as("").fail(401, 40, "POST", "/users/refresh-token", map[string]any{"token": tok})
	a.login(RootUsername, RootPassword)

	// No permission: a user without rights.
	a.ok(200, nil, "POST", "/users", map[string]any{"username": "nobody", "password": "secret1", "status": "active"})
	n := a.as("")
	n.login("nobody", "secret1")
	n.fail(403, 41, "GET", "/streams", nil)
	n.fail(403, 41, "POST", "/streams", map[string]any{"name": "x"})
	n.fail(403, 41, "GET", "/stats", nil)
	n.fail(403, 41, "GET", "/clients", nil)
	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "s"})
	a.ok(200, nil, "POST", "/streams/s/topics", topicBody("t", 1))
	n.fail(403, 41, "GET", "/streams/s", nil)
	n.fail(403, 41, "POST", "/streams/s/topics/t/messages", map[string]any{"partitioning": map[string]any{"kind": "balanced", "value": ""}, "messages": []any{map[string]any{"payload": "eA=="}}})
	n.fail(403, 41, "GET", "/streams/s/topics/t/messages", nil)
	// Missing targets are 404, never 403, and name what is missing.
	n.fail(404, 1009, "GET", "/streams/nope", nil)
	// Login failures are 401 (an Iggo choice: the reference answers 400).
	for _, body := range []map[string]any{
		{"username": "iggy", "password": "wrong"},
		{"username": "ghost", "password": "whatever"},
		{"username": "ig", "password": "iggy"},
	} {
		a.as("").fail(401, 42, "POST", "/users/login", body)
	}
}

// TestHTTPBadInput: unknown routes and methods, malformed JSON, content
// types, base64, sizes, numbers out of range, non-UTF-8 names, the
// typed errors and their fields.
func TestHTTPBadInput(t *testing.T) {
	_, a := startHTTP(t, withHTTP(func(h *configHTTP) { h.MaxRequestSize = 64 << 10 }))
	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "s"})
	a.ok(200, nil, "POST", "/streams/s/topics", topicBody("t", 2))

	a.fail(404, 404, "GET", "/nope", nil)
	a.fail(404, 404, "GET", "/streams/", nil)
	r := a.do("PATCH", "/streams", nil)
	if r.Status != 405 || !strings.Contains(r.Header.Get("Allow"), "GET") {
		t.Fatalf("PATCH /streams = %d %v", r.Status, r.Header)
	}
	a.fail(405, 405, "PATCH", "/streams", nil)

	// Content type, syntax, shape.
	a.fail(415, 415, "POST", "/streams", `{"name":"x"}`, "Content-Type", "text/plain")
	a.fail(415, 415, "POST", "/streams", `{"name":"x"}`, "Content-Type", "")
	a.fail(400, 400, "POST", "/streams", `{"name":`)
	a.fail(400, 400, "POST", "/streams", `{"name":"x"} trailing`)
	a.fail(422, 422, "POST", "/streams", `{"name":7}`)
	a.fail(422, 422, "POST", "/streams", `{}`)
	a.fail(422, 422, "POST", "/streams/s/topics", map[string]any{"name": "t2"})
	a.fail(400, 400, "POST", "/streams", "{\"name\":\"\xff\xfe\"}")

	// Numbers out of range.
	a.fail(422, 422, "POST", "/streams/s/topics", map[string]any{"name": "big", "partitions_count": 1 << 33, "compression_algorithm": "none", "message_expiry": 0, "max_topic_size": 0})
	a.fail(422, 422, "POST", "/streams/s/topics", map[string]any{"name": "neg", "partitions_count": -1, "compression_algorithm": "none", "message_expiry": 0, "max_topic_size": 0})
	a.fail(400, 2015, "POST", "/streams/s/topics", topicBody("many", 1001))
	a.fail(400, 400, "GET", "/streams/s/topics/t/messages?partition_id=4294967296", nil)
	a.fail(400, 400, "GET", "/streams/s/topics/t/messages?count=-1", nil)
	a.fail(400, 400, "GET", "/streams/s/topics/t/messages?kind=sideways", nil)
	a.fail(400, 400, "GET", "/streams/s/topics/t/messages?consistency=eventual", nil)
	a.ok(200, nil, "GET", "/streams/s/topics/t/messages?consistency=linearizable", nil)
	a.fail(400, 400, "DELETE", "/streams/s/topics/t/partitions", nil)

	// Names: not UTF-8 in the path (percent-encoded), too long, duplicate.
	a.fail(400, 6, "GET", "/streams/%FF%FE", nil)
	a.fail(400, 6, "GET", "/streams/"+strings.Repeat("a", 256), nil)
	e := a.fail(400, 1012, "POST", "/streams", map[string]any{"name": "s"})
	if e.Field == nil || *e.Field != "name" || e.Code != "stream_name_already_exists" {
		t.Fatalf("duplicate stream error %+v", e)
	}
	a.fail(400, 1013, "POST", "/streams", map[string]any{"name": strings.Repeat("n", 256)})
	e = a.fail(404, 1009, "PUT", "/streams/77", map[string]any{"name": "x"})
	if e.Field == nil || *e.Field != "stream_id" {
		t.Fatalf("missing stream error %+v", e)
	}
	a.fail(400, 4041, "PUT", "/streams/s", map[string]any{"name": "s", "options": map[string]string{"x": "1"}})

	// Produce body errors.
	msg := func(payload string) map[string]any { return map[string]any{"payload": payload} }
	part := map[string]any{"kind": "partition_id", "value": "AAAAAA=="}
	produce := "/streams/s/topics/t/messages"
	a.fail(422, 422, "POST", produce, map[string]any{"partitioning": part, "messages": []any{msg("!!!not base64")}})
	a.fail(422, 422, "POST", produce, map[string]any{"partitioning": part, "messages": []any{msg("")}})
	a.fail(422, 422, "POST", produce, map[string]any{"partitioning": part, "messages": []any{msg("eA==")}, "extra": 1})
	a.fail(422, 422, "POST", produce, map[string]any{"messages": []any{msg("eA==")}})
	a.fail(400, 4009, "POST", produce, map[string]any{"partitioning": part, "messages": []any{}})
	a.fail(400, 3, "POST", produce, map[string]any{"partitioning": map[string]any{"kind": "partition_id", "value": "AAA="}, "messages": []any{msg("eA==")}})
	a.fail(400, 4028, "POST", produce, map[string]any{"partitioning": map[string]any{"kind": "messages_key", "value": ""}, "messages": []any{msg("eA==")}})
	a.fail(422, 422, "POST", produce, map[string]any{"partitioning": map[string]any{"kind": "sideways", "value": ""}, "messages": []any{msg("eA==")}})
	a.fail(422, 422, "POST", produce, map[string]any{"partitioning": part, "messages": []any{map[string]any{"id": "not-an-id", "payload": "eA=="}}})
	a.fail(400, 400, "POST", produce+"?ack=maybe", map[string]any{"partitioning": part, "messages": []any{msg("eA==")}})
	a.fail(404, 3007, "GET", "/streams/s/topics/t/messages?partition_id=9", nil)
	a.fail(404, 2010, "GET", "/streams/s/topics/nope/messages", nil)
	a.fail(404, 1009, "GET", "/streams/nope/topics/t/messages", nil)
	a.fail(404, 404, "GET", "/streams/nope/topics/t/consumer-offsets", nil) // GET_CONSUMER_OFFSET answers empty: "no offset"
	a.fail(400, 4100, "PUT", "/streams/s/topics/t/consumer-offsets", map[string]any{"partition_id": 0, "offset": 99})
	a.fail(404, 3021, "DELETE", "/streams/s/topics/t/consumer-offsets/1?partition_id=0", nil)

	// Oversized body: 413 with Connection: close, and the server still
	// serves the next request.
	big := `{"partitioning":{"kind":"balanced","value":""},"messages":[{"payload":"` + strings.Repeat("A", 100<<10) + `"}]}`
	r = a.do("POST", produce, big)
	if r.Status != 413 || !r.Close {
		t.Fatalf("oversized produce = %d %v", r.Status, r.Header)
	}
	a.fail(413, 413, "POST", produce, big)
	a.ok(200, nil, "GET", "/streams", nil)
}

// TestHTTPSlowClientAndIdleConnections: 2,000 idle keep-alive
// connections and a client that never finishes its headers do not stop
// others from being served; the slow one is cut off by the header
// timeout (message_bus.handshake_grace).
func TestHTTPSlowClientAndIdleConnections(t *testing.T) {
	s, a := startHTTP(t, WithConfig(func(c *configT) { c.MessageBus.HandshakeGrace = durationOf(500 * time.Millisecond) }))
	addr := s.Broker.HTTPAddr().String()
	const idle = 2000
	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Idle keep-alive connections: each made one request, read its answer
	// and stays open.
	buf := make([]byte, 4096)
	for len(conns) < idle {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		if err != nil || !strings.Contains(string(buf[:n]), "pong") {
			t.Fatalf("keep-alive connection %d: %q %v", len(conns), buf[:n], err)
		}
	}
	if got := s.Broker.HTTPConnections(); got < idle {
		t.Fatalf("%d open connections, want at least %d", got, idle)
	}
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte("GET /ping HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a.ok(200, nil, "GET", "/streams", nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a request took %v with %d idle connections", d, idle)
	}
	// The slow client is closed by the server within the timeout (+ slack).
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := slow.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("slow client was not cut off")
			}
			break
		}
	}
	if n := s.Broker.HTTPAPI(); n == nil {
		t.Fatal("no HTTP API")
	}
}

// TestHTTPConnectionCapEvictsIdle: at tcp.max_connections a new
// connection replaces the longest-idle keep-alive one instead of being
// refused, so idle clients cannot lock others out.
func TestHTTPConnectionCapEvictsIdle(t *testing.T) {
	const max = 20
	s, a := startHTTP(t, WithConfig(func(c *configT) { c.TCP.MaxConnections = max }))
	a.c.CloseIdleConnections()
	addr := s.Broker.HTTPAddr().String()
	buf := make([]byte, 4096)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		_, _ = c.Write([]byte("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"))
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "pong") {
			t.Fatalf("idle connection: %q %v", buf[:n], err)
		}
	}
	a.ok(200, nil, "GET", "/streams", nil)
	if n := s.Broker.HTTPConnections(); n > max {
		t.Fatalf("%d connections open, cap %d", n, max)
	}
	// The oldest idle connection was the one closed.
	_ = conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conns[0].Read(buf); err == nil {
		t.Fatal("oldest idle connection still open")
	}
}
