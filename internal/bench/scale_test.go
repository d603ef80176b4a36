package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunScale: a small scale run creates the partitions, logs in the
// idle clients, reads the broker's counts, writes its result file and
// removes its streams.
func TestRunScale(t *testing.T) {
	addr := startBroker(t)
	out := filepath.Join(t.TempDir(), "scale.json")
	cfg := ScaleConfig{Addr: addr, Username: DefaultUsername, Password: DefaultPassword, Prefix: "sc",
		Streams: 2, TopicsPerStream: 3, PartitionsPerTopic: 4, Create: true, Clients: 5,
		Idle: 50 * time.Millisecond, Remove: true, Output: out}
	res, err := RunScale(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Streams != 2 || res.Topics != 6 || res.Partitions != 24 || res.ServerClients < 6 || res.Clients != 5 || res.IdleSeconds < 0.05 {
		t.Fatalf("result %+v", res)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var back ScaleResult
	if err := json.Unmarshal(data, &back); err != nil || back.Partitions != 24 {
		t.Fatalf("result file: %v %+v", err, back)
	}
	// Streams removed: a second run without creating finds none.
	cfg.Create, cfg.Clients, cfg.Output, cfg.Remove = false, 0, "", false
	res, err = RunScale(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Partitions != 0 {
		t.Fatalf("%d partitions left after removal", res.Partitions)
	}
}
