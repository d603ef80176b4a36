package itest

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkHTTPProduce sends batches of 100 × 1000-byte messages through
// the HTTP API (JSON, base64 payloads) on one keep-alive connection.
func BenchmarkHTTPProduce(b *testing.B) {
	s := Start(b, withHTTP())
	api := newHTTPAPI(b, s)
	api.login(RootUsername, RootPassword)
	api.ok(200, nil, "POST", "/streams", map[string]any{"name": "b"})
	api.ok(200, nil, "POST", "/streams/b/topics", topicBody("t", 1))
	payload := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 1000)))
	msgs := make([]any, 100)
	for i := range msgs {
		msgs[i] = map[string]any{"id": i + 1, "payload": payload}
	}
	body, _ := json.Marshal(map[string]any{"partitioning": map[string]any{"kind": "partition_id", "value": "AAAAAA=="}, "messages": msgs})
	b.SetBytes(100 * 1000)
	b.ResetTimer()
	for b.Loop() {
		if r := api.do("POST", "/streams/b/topics/t/messages", body); r.Status != 201 {
			b.Fatalf("produce %d %s", r.Status, r.Body)
		}
	}
}
