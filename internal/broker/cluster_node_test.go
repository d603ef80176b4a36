package broker

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/replication"
)

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(t *testing.T, n int) []uint16 {
	t.Helper()
	var out []uint16
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, uint16(ln.Addr().(*net.TCPAddr).Port))
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// replicaClusterConfig is a validated 3-node [cluster] on loopback with
// auth and self-signed TLS.
func replicaClusterConfig(t *testing.T, secret string) config.ClusterConfig {
	t.Helper()
	ports := freePorts(t, 6)
	toml := fmt.Sprintf(`
[cluster]
enabled = true
name = "node-test"
[cluster.auth]
enabled = true
shared_secret = %q
[cluster.tls]
enabled = true
self_signed = true
`, secret)
	for i := range 3 {
		toml += fmt.Sprintf("[[cluster.nodes]]\nname = \"n%d\"\nip = \"127.0.0.1\"\nreplica_id = %d\nports = { tcp = %d, tcp_replica = %d }\n", i, i, ports[2*i], ports[2*i+1])
	}
	c, _, err := config.Parse([]byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	c.QUIC.Enabled, c.WebSocket.Enabled, c.HTTP.Enabled = false, false, false
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c.Cluster
}

// lastIndex is a machine that keeps the index of the last entry applied.
type lastIndex struct{ at atomic.Uint64 }

func (m *lastIndex) Apply(e replication.Entry)            { m.at.Store(e.Index) }
func (m *lastIndex) Snapshot() ([]byte, error)            { return nil, nil }
func (m *lastIndex) Restore(index uint64, _ []byte) error { m.at.Store(index); return nil }

// TestReplicaNodesOverTLS: three replica nodes built from a parsed
// [cluster] with self-signed TLS elect replica 0 and commit; a node
// started with another secret is refused by the others.
func TestReplicaNodesOverTLS(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	cl := replicaClusterConfig(t, secret)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	nodes := map[replication.NodeID]*replicaNode{}
	for id := range 3 {
		c := cl
		c.ReplicaID = id
		n, err := newReplicaNode(&c, 0, time.Now, quiet, nil)
		if err != nil {
			t.Fatal(err)
		}
		nodes[replication.NodeID(id)] = n
		t.Cleanup(func() { n.Close() })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	machines := map[replication.NodeID]*lastIndex{}
	for _, id := range []replication.NodeID{2, 1, 0} {
		machines[id] = &lastIndex{}
		for _, g := range []replication.GroupID{replication.MetadataGroup, 1} {
			opts := replication.GroupOptions{Voters: []replication.NodeID{0, 1, 2}, Machine: &lastIndex{}}
			if g == 1 {
				opts.Machine = machines[id]
			}
			if err := nodes[id].host.AddGroup(ctx, g, opts); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := nodes[1].host.WaitFor(ctx, replication.MetadataGroup, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 }); err != nil {
		t.Fatal(err)
	}
	var idx uint64
	for {
		i, err := nodes[0].host.Propose(ctx, 1, []byte("over tls"))
		if err == nil {
			idx = i
			break
		}
		if !errors.Is(err, replication.ErrNotLeader) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := nodes[2].host.WaitFor(ctx, 1, func(v replication.View) bool { return v.Applied >= idx }); err != nil {
		t.Fatal(err)
	}
	if got := machines[2].at.Load(); got < idx {
		t.Fatalf("node 2's machine applied up to %d, want %d", got, idx)
	}
	if !nodes[0].transport.Connected(1) || !nodes[0].transport.Connected(2) {
		t.Fatal("replica connections are not up")
	}

	// A node configured with another secret is refused by the others.
	bad := cl
	bad.ReplicaID = 2
	bad.Auth.SharedSecret = "ffffffffffffffffffffffffffffffff"
	nodes[2].Close()
	n, err := newReplicaNode(&bad, 0, time.Now, quiet, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for n.transport.Stats().HandshakeFailures == 0 {
		if ctx.Err() != nil {
			t.Fatal("the node with the wrong secret saw no refused handshake")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n.transport.Connected(0) || nodes[0].transport.Connected(2) {
		t.Fatal("a node with the wrong secret connected")
	}
}

// TestGeneratedCertificates: the client listeners' certificate names
// localhost and the loopback addresses for servers; a replica's names its
// roster IP for both ends of a connection; both are dated from the clock.
func TestGeneratedCertificates(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	srv, err := SelfSigned(now, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Leaf.VerifyHostname("localhost"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(srv.Leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Fatalf("server certificate usage %v", srv.Leaf.ExtKeyUsage)
	}
	rep, err := replicaCert(now, "10.0.0.7")
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Leaf.VerifyHostname("10.0.0.7"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}) {
		t.Fatalf("replica certificate usage %v", rep.Leaf.ExtKeyUsage)
	}
	for _, c := range []*x509.Certificate{srv.Leaf, rep.Leaf} {
		if c.NotBefore.After(now) || !c.NotAfter.Equal(now.Add(selfSignedValidity)) {
			t.Fatalf("certificate %q valid %s to %s, want from before %s for %s", c.Subject.CommonName, c.NotBefore, c.NotAfter, now, selfSignedValidity)
		}
	}
}
