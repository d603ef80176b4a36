package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/server"
	"github.com/iggo-dev/iggo/wire"
)

func TestEmbeddedServer(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.TCP.Address = "127.0.0.1:0"
	cfg.QUIC.Address, cfg.WebSocket.Address = "127.0.0.1:0", "127.0.0.1:0" // off the fixed default ports
	cfg.HTTP.Address = "127.0.0.1:0"
	cfg.System.Path = t.TempDir()
	srv, err := server.New(cfg, server.WithRootCredentials("admin", "secret"), server.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background()) }()

	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	login := wire.LoginRegister{
		Version:  wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "embed-test", SDKVersion: "1"},
		Username: "admin", Password: "secret",
	}
	body := login.AppendTo(nil)
	h := wire.RequestHeader{Prologue: wire.Prologue{Size: uint32(wire.HeaderSize + len(body))}, Client: wire.Uint128{Lo: 42}, Operation: wire.OpRegister}
	if _, err := nc.Write(append(h.AppendTo(nil), body...)); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var hdr [wire.HeaderSize]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		t.Fatal(err)
	}
	var r wire.ReplyHeader
	if err := r.Decode(hdr[:]); err != nil || r.Status != 0 {
		t.Fatalf("login reply %+v %v", r, err)
	}
	reply := make([]byte, r.Size-wire.HeaderSize)
	if _, err := io.ReadFull(nc, reply); err != nil {
		t.Fatal(err)
	}
	payload, err := wire.SplitResult(reply)
	var lr wire.LoginRegisterReply
	if err != nil || lr.Decode(payload) != nil || lr.Session == 0 {
		t.Fatalf("login payload % x: %v", reply, err)
	}

	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestLoadConfig(t *testing.T) {
	cfg, err := server.LoadConfig("", []string{"IGGY_TCP_ADDRESS=127.0.0.1:7777"}, nil)
	if err != nil || cfg.TCP.Address != "127.0.0.1:7777" {
		t.Fatalf("LoadConfig = %+v, %v", cfg.TCP, err)
	}
	if _, err := server.New(server.Config{}); err == nil {
		t.Fatal("New accepted an empty configuration")
	}
}
