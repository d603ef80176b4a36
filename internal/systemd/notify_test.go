package systemd

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen opens a unixgram socket like systemd's notify socket.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func recv(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no datagram: %v", err)
	}
	return string(buf[:n])
}

func TestNotifyPathSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	srv := listen(t, sock)
	n, err := New([]string{"NOTIFY_SOCKET=" + sock}, os.Getpid())
	if err != nil || n == nil {
		t.Fatalf("New = %v, %v", n, err)
	}
	defer n.Close()
	if err := n.Ready("serving tcp 127.0.0.1:8090"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, srv); got != "READY=1\nSTATUS=serving tcp 127.0.0.1:8090" {
		t.Fatalf("got %q", got)
	}
	if err := n.Status("a\nSTOPPING=1"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, srv); got != "STATUS=a STOPPING=1" {
		t.Fatalf("a newline in a status must not start an assignment: %q", got)
	}
	if err := n.Stopping("shutting down"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, srv); got != "STOPPING=1\nSTATUS=shutting down" {
		t.Fatalf("got %q", got)
	}
	long := strings.Repeat("s", 5000)
	n.Status(long)
	if got := recv(t, srv); len(got) != len("STATUS=")+maxStatusBytes {
		t.Fatalf("status not bounded: %d bytes", len(got))
	}
}

func TestNotifyAbstractSocket(t *testing.T) {
	name := fmt.Sprintf("@iggo-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	srv := listen(t, name)
	n, err := New([]string{"NOTIFY_SOCKET=" + name}, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Send("READY=1"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, srv); got != "READY=1" {
		t.Fatalf("got %q", got)
	}
}

func TestNoSocketIsNoOp(t *testing.T) {
	n, err := New([]string{"PATH=/bin"}, 1)
	if err != nil || n != nil {
		t.Fatalf("New without NOTIFY_SOCKET = %v, %v", n, err)
	}
	if err := n.Ready("x"); err != nil {
		t.Fatal(err)
	}
	if n.WatchdogInterval() != 0 {
		t.Fatal("watchdog without a socket")
	}
	n.Watchdog(context.Background(), nil) // returns at once
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSendToMissingSocketFails(t *testing.T) {
	n, err := New([]string{"NOTIFY_SOCKET=" + filepath.Join(t.TempDir(), "absent")}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Send("READY=1"); err == nil || !strings.Contains(err.Error(), "sd_notify") {
		t.Fatalf("send to a missing socket: %v", err)
	}
}

func TestBadEnvironment(t *testing.T) {
	for _, env := range [][]string{
		{"NOTIFY_SOCKET=relative.sock"},
		{"NOTIFY_SOCKET=/x", "WATCHDOG_USEC=abc"},
		{"NOTIFY_SOCKET=/x", "WATCHDOG_USEC=0"},
		{"NOTIFY_SOCKET=/x", "WATCHDOG_USEC=100", "WATCHDOG_PID=me"},
	} {
		if _, err := New(env, 1); err == nil {
			t.Errorf("New(%q) accepted", env)
		}
	}
}

func TestWatchdogPID(t *testing.T) {
	n, _ := New([]string{"NOTIFY_SOCKET=/x", "WATCHDOG_USEC=30000000", "WATCHDOG_PID=42"}, 42)
	if n.WatchdogInterval() != 15*time.Second {
		t.Fatalf("interval = %v, want 15s", n.WatchdogInterval())
	}
	n, _ = New([]string{"NOTIFY_SOCKET=/x", "WATCHDOG_USEC=30000000", "WATCHDOG_PID=43"}, 42)
	if n.WatchdogInterval() != 0 {
		t.Fatal("watchdog meant for another process is used")
	}
	n, _ = New([]string{"NOTIFY_SOCKET=/x", "WATCHDOG_USEC=30000000"}, 42)
	if n.WatchdogInterval() != 15*time.Second {
		t.Fatal("watchdog without WATCHDOG_PID is ignored")
	}
}

func TestWatchdogPings(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	srv := listen(t, sock)
	n, err := New([]string{"NOTIFY_SOCKET=" + sock, "WATCHDOG_USEC=40000"}, os.Getpid()) // 40 ms: ping every 20 ms
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() { n.Watchdog(ctx, nil); close(done) }()
	for range 4 {
		if got := recv(t, srv); got != "WATCHDOG=1" {
			t.Fatalf("got %q", got)
		}
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Fatalf("4 pings in %v: faster than every 20 ms", el)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watchdog did not stop")
	}
}
