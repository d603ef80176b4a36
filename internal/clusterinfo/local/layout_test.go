package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
)

func TestNewLayoutPorts(t *testing.T) {
	l, err := NewLayout(t.TempDir(), 3, 8090, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []Ports{{8090, 8190, 8290}, {8091, 8191, 8291}, {8092, 8192, 8292}}
	for i, p := range l.Nodes {
		if p != want[i] {
			t.Errorf("node %d ports %+v, want %+v", i, p, want[i])
		}
	}
	if len(l.Secret) < 32 {
		t.Errorf("secret of %d bytes, want at least 32", len(l.Secret))
	}
	if _, err := NewLayout("x", 0, 8090, false); err == nil {
		t.Error("0 nodes accepted")
	}
	if _, err := NewLayout("x", 3, 65400, false); err == nil {
		t.Error("ports past 65535 accepted")
	}
}

func TestWriteAndReadLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	l, err := NewLayout(dir, 3, 9000, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Secret != l.Secret || len(got.Nodes) != 3 || got.Nodes[2] != l.Nodes[2] || got.Name != l.Name {
		t.Fatalf("read back %+v, want %+v", got, l)
	}
	st, err := os.Stat(filepath.Join(dir, SecretFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, want 0600", st.Mode().Perm())
	}
	js, err := os.ReadFile(filepath.Join(dir, LayoutFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), l.Secret) {
		t.Error("the layout file carries the secret")
	}
}

// TestConfigValidates parses every node's TOML with the server's own
// loader and validates it as `iggo server --replica-id i` does: the roster,
// the secret, the node's data directory and listener, and the transports
// that are off.
func TestConfigValidates(t *testing.T) {
	for _, http := range []bool{false, true} {
		l, err := NewLayout(t.TempDir(), 3, 9000, http)
		if err != nil {
			t.Fatal(err)
		}
		l.HeartbeatTimeout, l.CommitBroadcastInterval = "3s", "250ms"
		for i := range l.Nodes {
			cfg, notices, err := config.Parse([]byte(l.Config(i)))
			if err != nil {
				t.Fatalf("node %d config does not parse: %v\n%s", i, err, l.Config(i))
			}
			for _, n := range notices {
				if n.Warn {
					t.Errorf("node %d config: warning %q", i, n.Message)
				}
			}
			cfg.Cluster.ReplicaID = i
			if err := cfg.Validate(); err != nil {
				t.Fatalf("node %d config invalid: %v\n%s", i, err, l.Config(i))
			}
			cl := cfg.Cluster
			if !cl.Enabled || cl.Name != l.Name || !cl.Auth.Enabled || string(cl.Auth.SharedSecret) != l.Secret ||
				cl.HeartbeatTimeout.Std() != 3*time.Second || cl.CommitBroadcastInterval.Std() != 250*time.Millisecond {
				t.Errorf("node %d cluster section %+v", i, cl)
			}
			if !filepath.IsAbs(cfg.System.Path) || !strings.HasSuffix(cfg.System.Path, filepath.Join(NodeName(i), "data")) {
				t.Errorf("node %d system.path %q", i, cfg.System.Path)
			}
			if cfg.TCP.Address != l.TCPAddr(i) || cfg.QUIC.Enabled || cfg.WebSocket.Enabled || cfg.HTTP.Enabled != http {
				t.Errorf("node %d listeners tcp %q quic %v ws %v http %v", i, cfg.TCP.Address, cfg.QUIC.Enabled, cfg.WebSocket.Enabled, cfg.HTTP.Enabled)
			}
			if len(cl.Nodes) != 3 {
				t.Fatalf("%d roster entries", len(cl.Nodes))
			}
			for j, n := range cl.Nodes {
				wantHTTP := uint16(0)
				if http {
					wantHTTP = uint16(9200 + j)
				}
				if n.Name != NodeName(j) || n.IP != "127.0.0.1" || int(n.ReplicaID) != j || n.Ports.TCP != uint16(9000+j) ||
					n.Ports.TCPReplica != uint16(9100+j) || n.Ports.HTTP != wantHTTP {
					t.Errorf("roster entry %d: %+v", j, n)
				}
			}
		}
	}
}
