package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/internal/config"
)

// The default cluster ports must not collide with a standalone server's
// default ports, so both run side by side.
func TestClusterDefaultPortsClearOfStandalone(t *testing.T) {
	c := config.Default()
	standalone := map[int]string{}
	for name, addr := range map[string]string{"tcp": c.TCP.Address, "quic": c.QUIC.Address, "websocket": c.WebSocket.Address, "http": c.HTTP.Address} {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%s address %q: %v", name, addr, err)
		}
		p, _ := strconv.Atoi(port)
		standalone[p] = name
	}
	l, err := local.NewLayout(t.TempDir(), 3, DefaultClusterBasePort, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range l.Nodes {
		for _, port := range []uint16{p.TCP, p.TCPReplica, p.HTTP} {
			if name, ok := standalone[int(port)]; ok {
				t.Errorf("node %d port %d is the standalone server's %s port", i, port, name)
			}
		}
	}
}

func TestClusterIPFromEnvironment(t *testing.T) {
	var out bytes.Buffer
	for _, tc := range []struct{ value, want string }{
		{"", ""},
		{"127.0.0.2:8090", "127.0.0.2"},
		{"0.0.0.0:8090", ""},
		{"[::]:8090", ""},
	} {
		got, err := clusterIP(&out, tc.value)
		if err != nil || got != tc.want {
			t.Errorf("clusterIP(%q) = %q, %v; want %q", tc.value, got, err, tc.want)
		}
	}
	if _, err := clusterIP(&out, "localhost:8090"); exitCode(err) != ExitUsage {
		t.Errorf("host name accepted: %v", err)
	}
	l, err := local.NewLayout("x", 2, 9000, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := applyClusterIP(l, "127.0.0.2", false); err != nil || l.IP(0) != "127.0.0.2" || l.IP(1) != "127.0.0.2" {
		t.Fatalf("new layout: %v, IPs %v", err, l.IPs)
	}
	if err := applyClusterIP(l, "127.0.0.3", true); exitCode(err) != ExitUsage {
		t.Fatalf("recorded layout moved to another IP: %v", err)
	}
}

// A node that fails at start (its port is taken) stops `cluster start`
// with the end of that node's log printed line by line; the nodes listen
// on the IP of IGGY_TCP_ADDRESS.
func TestClusterStartFailurePrintsLogLines(t *testing.T) {
	bin := iggoBinary(t)
	const ip = "127.0.0.2"
	base := freeBaseOn(t, ip)
	busy, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(base)+1)))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "c")
	env := append(os.Environ(), "HOME="+t.TempDir(), envTCPAddress+"="+ip+":1")
	r := runBinary(t, bin, env, "", "cluster", "start", "--dir", dir, "--base-port", strconv.Itoa(int(base)), "--wait", "30s")
	if r.code != ExitError {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, ExitError, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, envTCPAddress+"="+ip+":1: the nodes listen on "+ip) {
		t.Errorf("no note about %s:\n%s", envTCPAddress, r.stdout)
	}
	logPath := filepath.Join(dir, "node1", "server.log")
	if !strings.Contains(r.stderr, "end of "+logPath+":\n  ") {
		t.Errorf("stderr lacks the log tail header:\n%s", r.stderr)
	}
	last := strings.TrimSpace(r.stderr[strings.LastIndex(strings.TrimRight(r.stderr, "\n"), "\n")+1:])
	if !strings.HasPrefix(last, "iggo: node1 exited while starting") || strings.Contains(last, "; time=") {
		t.Errorf("error line %q: want the exit without the log joined in", last)
	}
	if strings.Count(r.stderr, "\n  ") < 2 {
		t.Errorf("log tail not printed as lines:\n%s", r.stderr)
	}
	l, err := local.ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.IP(0) != ip || l.TCPAddr(2) != net.JoinHostPort(ip, strconv.Itoa(int(base)+2)) {
		t.Errorf("layout IPs %v, want %s", l.IPs, ip)
	}
}
