package itest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// TestHTTPAndBinaryShareOneImplementation: messages produced over HTTP are
// polled with the binary Go SDK, and messages the SDK sent are polled over
// HTTP, ids and payloads intact; a stream created over one is visible on
// the other.
func TestHTTPAndBinaryShareOneImplementation(t *testing.T) {
	s, a := startHTTP(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, s.Addr, client.WithCredentials(RootUsername, RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	a.ok(200, nil, "POST", "/streams", map[string]any{"name": "mixed"})
	if _, err := c.CreateTopic(ctx, wire.NamedID("mixed"), "t", 1); err != nil {
		t.Fatal(err)
	}
	// HTTP -> SDK.
	big := "340282366920938463463374607431768211455"
	a.ok(201, nil, "POST", "/streams/mixed/topics/t/messages", map[string]any{
		"partitioning": map[string]any{"kind": "partition_id", "value": "AAAAAA=="},
		"messages": []any{
			map[string]any{"id": big, "payload": base64.StdEncoding.EncodeToString([]byte("from-http"))},
			map[string]any{"id": 7, "payload": base64.StdEncoding.EncodeToString([]byte("second"))},
		},
	})
	pm, err := c.PollMessages(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: wire.NamedID("mixed"),
		TopicID: wire.NamedID("t"), Partition: wire.SomePartition(0), Strategy: wire.PollingStrategy{Kind: wire.PollOffset}, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	it := pm.Messages()
	m, ok := it.Next()
	if !ok || string(m.Payload) != "from-http" || m.ID != (wire.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}) {
		t.Fatalf("SDK poll of an HTTP message: %+v %v", m, ok)
	}
	m, ok = it.Next()
	if !ok || string(m.Payload) != "second" || m.ID != (wire.Uint128{Lo: 7}) {
		t.Fatalf("second message %+v", m)
	}
	// SDK -> HTTP.
	id := wire.Uint128{Hi: 1 << 63, Lo: 42}
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("trace"), Value: wire.Uint64Header(99)}}
	if _, err := c.SendMessages(ctx, wire.NamedID("mixed"), wire.NamedID("t"), wire.Partitioning{Kind: wire.PartitionByID, PartitionID: 0},
		[]wire.Message{{ID: id, Payload: []byte("from-sdk"), UserHeaders: hdrs.AppendTo(nil)}}); err != nil {
		t.Fatal(err)
	}
	var polled struct {
		Messages []struct {
			Header struct {
				ID     json.Number `json:"id"`
				Offset uint64      `json:"offset"`
			} `json:"header"`
			Payload     string `json:"payload"`
			UserHeaders []struct {
				Key   struct{ Kind, Value string } `json:"key"`
				Value struct{ Kind, Value string } `json:"value"`
			} `json:"user_headers"`
		} `json:"messages"`
	}
	a.ok(200, &polled, "GET", "/streams/mixed/topics/t/messages?partition_id=0&kind=offset&value=2&count=1", nil)
	if len(polled.Messages) != 1 {
		t.Fatalf("HTTP poll %+v", polled)
	}
	got := polled.Messages[0]
	if got.Header.ID.String() != "170141183460469231731687303715884105770" || got.Header.Offset != 2 || got.Payload != base64.StdEncoding.EncodeToString([]byte("from-sdk")) {
		t.Fatalf("HTTP poll of an SDK message %+v", got)
	}
	if len(got.UserHeaders) != 1 || got.UserHeaders[0].Value.Kind != "uint64" || got.UserHeaders[0].Key.Kind != "string" {
		t.Fatalf("user headers %+v", got.UserHeaders)
	}
	// Offsets stored over HTTP are seen by the SDK.
	a.ok(204, nil, "PUT", "/streams/mixed/topics/t/consumer-offsets", map[string]any{"consumer_id": 5, "partition_id": 0, "offset": 1})
	off, err := c.GetConsumerOffset(ctx, wire.SingleConsumer(wire.NumericID(5)), wire.NamedID("mixed"), wire.NamedID("t"), wire.SomePartition(0))
	if err != nil || off == nil || off.StoredOffset != 1 {
		t.Fatalf("SDK offset %+v %v", off, err)
	}
}

// TestHTTPTLS serves HTTPS with a certificate made in the test; HTTP/2 is
// negotiated by ALPN, and HTTP/1.1 still works.
func TestHTTPTLS(t *testing.T) {
	dir := t.TempDir()
	cert, err := broker.SelfSigned(time.Now(), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := writePEM(t, dir, cert)
	certPEM, err := os.ReadFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, withHTTP(func(h *config.HTTPConfig) { h.TLS = config.HTTPTLSConfig{Enabled: true, CertFile: cf, KeyFile: kf} }))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	for _, tc := range []struct {
		name  string
		h2    bool
		proto int
	}{{"h2", true, 2}, {"http/1.1", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}, ForceAttemptHTTP2: tc.h2}
			if !tc.h2 {
				tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			}
			defer tr.CloseIdleConnections()
			a := &httpAPI{t: t, base: "https://" + s.Broker.HTTPAddr().String(), c: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
			a.login(RootUsername, RootPassword)
			req, _ := http.NewRequest("GET", a.base+"/streams", nil)
			req.Header.Set("Authorization", "Bearer "+a.token)
			resp, err := a.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.ProtoMajor != tc.proto {
				t.Fatalf("status %d proto %s", resp.StatusCode, resp.Proto)
			}
			if tc.h2 && (resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2") {
				t.Fatalf("ALPN %+v", resp.TLS)
			}
		})
	}
	// Plain HTTP on the HTTPS port is refused.
	plain := &httpAPI{t: t, base: "http://" + s.Broker.HTTPAddr().String(), c: &http.Client{Timeout: 5 * time.Second}}
	if r := plain.do("GET", "/ping", nil); r.Status != http.StatusBadRequest {
		t.Fatalf("plain HTTP on the TLS port = %d", r.Status)
	}
}

// TestHTTPPortZeroInRuntimeConfig: with port 0 the bound address lands in
// runtime/current_config.toml, and the JWT secrets are never written.
func TestHTTPPortZeroInRuntimeConfig(t *testing.T) {
	s := Start(t, withHTTP(func(h *config.HTTPConfig) { h.JWT.EncodingSecret = "do-not-write-me-anywhere-please-0123" }))
	data, err := os.ReadFile(filepath.Join(s.Dir, "runtime", "current_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	eff, _, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if eff.HTTP.Address != s.Broker.HTTPAddr().String() || eff.HTTP.Address == "127.0.0.1:0" {
		t.Fatalf("effective http.address %q, bound %s", eff.HTTP.Address, s.Broker.HTTPAddr())
	}
	if eff.HTTP.JWT.EncodingSecret != "" || containsBytes(data, "do-not-write-me") {
		t.Fatal("the JWT secret was written to current_config.toml")
	}
}

func containsBytes(b []byte, s string) bool { return strings.Contains(string(b), s) }
