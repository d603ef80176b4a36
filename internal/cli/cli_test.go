package cli

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

func TestServerRefusesBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[metadata]\nclients_table_max = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		environ []string
		want    string
	}{
		{"missing config file", []string{"server", "--config", filepath.Join(dir, "nope.toml")}, nil, "nope.toml"},
		{"config file from env", []string{"server"}, []string{"IGGY_CONFIG_PATH=" + bad}, "clients_table_max"},
		{"invalid env value", []string{"server"}, []string{"IGGY_HEARTBEAT_INTERVAL=soon"}, "IGGY_HEARTBEAT_INTERVAL"},
		{"invalid flag value", []string{"server", "--log-level", "shouty"}, nil, "system.logging.level"},
		{"half root credentials", []string{"server", "--data-path", dir, "--tcp-address", "127.0.0.1:0"}, []string{"IGGY_ROOT_USERNAME=admin"}, "IGGY_ROOT_PASSWORD"},
		{"relocated key", []string{"server"}, []string{"IGGY_SYSTEM_SEGMENT_SIZE=1GiB"}, "segment_size"},
		{"unknown flag", []string{"server", "--nope"}, nil, "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr testutil.SyncBuffer
			code := Execute(t.Context(), Env{Args: tc.args, Environ: tc.environ, Stdout: io.Discard, Stderr: &stderr})
			if code == 0 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want a failure mentioning %q", code, stderr.String(), tc.want)
			}
		})
	}
}

func TestServerStartsAndStops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "old")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, Env{
			Args:    []string{"server", "--fresh", "--data-path", dir, "--tcp-address", "127.0.0.1:0"},
			Environ: []string{"IGGY_HEARTBEAT_INTERVAL=5 s", "IGGY_BOGUS=1", "IGGY_ROOT_USERNAME=admin", "IGGY_ROOT_PASSWORD=secret", "IGGY_QUIC_ADDRESS=127.0.0.1:0", "IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0", "IGGY_HTTP_ADDRESS=127.0.0.1:0"},
			Stdout:  io.Discard, Stderr: &stderr,
		})
	}()
	// The effective configuration names the bound address once listening.
	runtime := filepath.Join(dir, "runtime", "current_config.toml")
	var addr string
	deadline := time.Now().Add(20 * time.Second)
	for addr == "" {
		if time.Now().After(deadline) {
			t.Fatalf("server did not start; stderr:\n%s", stderr.String())
		}
		if data, err := os.ReadFile(runtime); err == nil {
			if cfg, _, err := config.Parse(data); err == nil && cfg.TCP.Address != "127.0.0.1:0" {
				addr = cfg.TCP.Address
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("--fresh kept the old data directory contents")
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	h := wire.RequestHeader{Prologue: wire.Prologue{Size: wire.HeaderSize}, Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing}
	if _, err := nc.Write(h.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	var reply [wire.HeaderSize]byte
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(nc, reply[:]); err != nil || wire.PeekKind(reply[:]) != wire.KindReply {
		t.Fatalf("PING: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	log := stderr.String()
	for _, want := range []string{"unknown environment variable IGGY_BOGUS", "iggo server listening", "iggo server stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
