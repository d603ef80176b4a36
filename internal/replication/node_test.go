package replication

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
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

func clusterConfig(t *testing.T, secret string) config.ClusterConfig {
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

func TestNodesFromConfigOverTLS(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	cl := clusterConfig(t, secret)
	nodes := map[NodeID]*Node{}
	sms := map[NodeID]*recordSM{0: newRecordSM(), 1: newRecordSM(), 2: newRecordSM()}
	for id := range 3 {
		c := cl
		c.ReplicaID = id
		n, err := NewNode(&c, testLogger())
		if err != nil {
			t.Fatal(err)
		}
		nodes[NodeID(id)] = n
		t.Cleanup(func() { n.Close() })
	}
	ctx := contextWithTimeout(t, 20*time.Second)
	for _, id := range []NodeID{2, 1, 0} {
		for _, g := range []GroupID{MetadataGroup, 1} {
			if err := nodes[id].Host.AddGroup(ctx, g, GroupOptions{Voters: []NodeID{0, 1, 2}, Machine: sms[id].machine(g)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := nodes[1].Host.WaitFor(ctx, MetadataGroup, func(v View) bool { return v.HasLeader && v.Leader == 0 }); err != nil {
		t.Fatal(err)
	}
	var idx uint64
	for {
		i, err := nodes[0].Host.Propose(ctx, 1, []byte("over tls"))
		if err == nil {
			idx = i
			break
		}
		if !errors.Is(err, ErrNotLeader) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := nodes[2].Host.WaitFor(ctx, 1, func(v View) bool { return v.Applied >= idx }); err != nil {
		t.Fatal(err)
	}
	if !nodes[0].Transport.Connected(1) || !nodes[0].Transport.Connected(2) {
		t.Fatal("replica connections are not up")
	}

	// A node configured with another secret is refused by the others.
	bad := cl
	bad.ReplicaID = 2
	bad.Auth.SharedSecret = "ffffffffffffffffffffffffffffffff"
	nodes[2].Close()
	n, err := NewNode(&bad, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for n.Transport.Stats().HandshakeFailures == 0 {
		if ctx.Err() != nil {
			t.Fatal("the node with the wrong secret saw no refused handshake")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n.Transport.Connected(0) || nodes[0].Transport.Connected(2) {
		t.Fatal("a node with the wrong secret connected")
	}
}
