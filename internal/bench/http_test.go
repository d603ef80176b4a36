package bench

import (
	"testing"
)

// TestEmbeddedHTTP produces and polls over the HTTP API against the
// embedded broker, with pinned producers/consumers and a pre-filled
// consumer scenario: every message is counted through.
func TestEmbeddedHTTP(t *testing.T) {
	for _, s := range []Scenario{PinnedProducerAndConsumer, PinnedConsumer} {
		t.Run(string(s), func(t *testing.T) {
			cfg := small(s, "")
			cfg.Transport, cfg.Producers, cfg.Consumers = "http", 1, 1
			if s == PinnedConsumer {
				cfg.Producers = 0
			}
			r := runAndRead(t, cfg)
			checkComplete(t, cfg, r)
			if r.Params.Transport != "http" {
				t.Fatalf("params: transport %q", r.Params.Transport)
			}
		})
	}
}

func TestMessagesJSONRoundTrip(t *testing.T) {
	cfg := Config{MessageSize: 10, MessagesPerBatch: 3}
	src, err := newBatchSource(&cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	js, err := messagesJSON(src.batch)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"92233720368547758081","payload":"YWJjZGVmZ2hpag=="}`
	if string(js[:len(want)]) != want {
		t.Fatalf("messages JSON %s", js)
	}
}

func TestHTTPRefusesGroupScenarios(t *testing.T) {
	cfg := small(BalancedConsumerGroup, "")
	cfg.Transport = "http"
	if err := cfg.Normalize(); err == nil {
		t.Fatal("balanced-consumer-group over http accepted")
	}
}
