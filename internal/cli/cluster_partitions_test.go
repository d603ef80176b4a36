package cli

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/itest"
)

// TestClusterPartitions: `iggo cluster partitions` against a one-node
// cluster lists the node and every partition with its replicas, leader
// and caught-up replicas, as a table and as JSON; a single node (no
// cluster) is refused with a clear reason.
func TestClusterPartitions(t *testing.T) {
	ports := make([]uint16, 2)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = uint16(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
	}
	e := newCLI(t, itest.WithConfig(func(c *config.Config) {
		c.Cluster.Enabled = true
		c.Cluster.Name = "cli-cluster"
		c.Cluster.Nodes = []config.ClusterNode{{Name: "solo", IP: "127.0.0.1", ReplicaID: 0, Ports: config.ClusterPorts{TCP: ports[0], TCPReplica: ports[1]}}}
	}))
	e.ok("stream", "create", "orders")
	e.ok("topic", "create", "orders", "events", "2")
	var v struct {
		Nodes []struct {
			ReplicaID int    `json:"replica_id"`
			Name      string `json:"name"`
			Address   string `json:"address"`
		} `json:"nodes"`
		Partitions []struct {
			Stream    string `json:"stream"`
			Topic     string `json:"topic"`
			Partition uint32 `json:"partition"`
			Replicas  []int  `json:"replicas"`
			Leader    *int   `json:"leader"`
			CaughtUp  []int  `json:"caught_up"`
		} `json:"partitions"`
	}
	// A new topic's partition groups elect their leader a moment after
	// the reply: wait (bounded) until the map shows one for each.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		e.okJSON(&v, "cluster", "partitions", "-o", "json")
		led := len(v.Partitions) == 2
		for _, p := range v.Partitions {
			led = led && p.Leader != nil && len(p.CaughtUp) == 1
		}
		if led || time.Now().After(deadline) {
			break
		}
	}
	if len(v.Nodes) != 1 || v.Nodes[0].Name != "solo" || v.Nodes[0].Address != e.srv.Addr {
		t.Fatalf("nodes %+v, want solo at %s", v.Nodes, e.srv.Addr)
	}
	if len(v.Partitions) != 2 {
		t.Fatalf("partitions %+v", v.Partitions)
	}
	for i, p := range v.Partitions {
		if p.Stream != "orders" || p.Topic != "events" || p.Partition != uint32(i) || len(p.Replicas) != 1 || p.Replicas[0] != 0 ||
			p.Leader == nil || *p.Leader != 0 || len(p.CaughtUp) != 1 {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
	out := e.ok("cluster", "partitions")
	wantLines(t, out, "REPLICA", "solo", "STREAM", "CAUGHT UP", "orders")
	if !strings.Contains(out, "events  1          0         0       0") {
		t.Fatalf("table:\n%s", out)
	}
	yaml := e.ok("cluster", "partitions", "-o", "yaml")
	wantLines(t, yaml, "partitions:", "caught_up:")

	single := newCLI(t)
	single.run("cluster", "partitions").wantError(t, ExitError, "not a cluster member", "FeatureUnavailable")
}
