package cli

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
)

// freeBase returns a port p such that nothing listens on 127.0.0.1:p..p+2
// at the time of the call (each was bound and released).
func freeBase(t *testing.T) uint16 { return freeBaseOn(t, "127.0.0.1") }

// freeBaseOn is freeBase on ip; it also checks p+100..p+102 (the replica
// ports of `cluster start`).
func freeBaseOn(t *testing.T, ip string) uint16 {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if base+300 > 65535 {
			continue
		}
		ok := true
		for _, i := range []int{1, 2, 100, 101, 102} {
			l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(base+i)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return uint16(base)
		}
	}
	t.Fatal("no three free consecutive ports")
	return 0
}

// A cluster whose nodes are all down has no leader: status exits
// non-zero (ExitConnection), and each node's error names it once.
func TestClusterStatusAllDown(t *testing.T) {
	bin := iggoBinary(t)
	dir := filepath.Join(t.TempDir(), "c")
	l, err := local.NewLayout(dir, 3, freeBase(t), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, bin, []string{"HOME=" + t.TempDir()}, "", "cluster", "status", "--dir", dir)
	if r.code != ExitConnection {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, ExitConnection, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "none agreed") || !strings.Contains(r.stderr, "no node of cluster") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for i, addr := range l.TCPAddrs() {
		var line string
		for l := range strings.Lines(r.stdout) {
			if strings.HasPrefix(l, local.NodeName(i)+" ") {
				line = l
			}
		}
		if strings.Count(line, addr) != 1 || !strings.Contains(line, "dial: connection refused") {
			t.Errorf("node %d line %q: want its address once and 'dial: connection refused'", i, line)
		}
	}
}
