package local

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Root credentials of every node: cluster mode takes them from
// IGGY_ROOT_USERNAME / IGGY_ROOT_PASSWORD.
const (
	RootUsername = "iggy"
	RootPassword = "iggy"
)

// LayoutFile is the file, in the root directory, that records a Layout
// (so `iggo cluster status` can find the nodes later).
const LayoutFile = "cluster.json"

// SecretFile is the file, in the root directory, holding the shared
// secret of the replica handshake (mode 0600).
const SecretFile = "shared_secret"

// Ports are one node's listener ports; HTTP is 0 unless the layout
// enables HTTP.
type Ports struct {
	TCP        uint16 `json:"tcp"`
	TCPReplica uint16 `json:"tcp_replica"`
	HTTP       uint16 `json:"http,omitempty"`
}

// Layout describes a local cluster: node i is replica i, named node<i>,
// listening on IP(i) (127.0.0.1 unless IPs says otherwise) with Nodes[i]'s
// ports, with its configuration and data under Dir/node<i>.
type Layout struct {
	// Name is cluster.name.
	Name string `json:"name"`
	// Dir is the root directory (absolute or relative to the working
	// directory of the caller).
	Dir string `json:"-"`
	// Nodes are the ports of each node, in replica id order.
	Nodes []Ports `json:"nodes"`
	// HTTP enables the HTTP transport on every node.
	HTTP bool `json:"http"`
	// Secret is cluster.auth.shared_secret (not recorded in LayoutFile; it
	// lives in SecretFile).
	Secret string `json:"-"`
	// HeartbeatTimeout and CommitBroadcastInterval override the cluster
	// timers when not empty (TOML durations, e.g. "5s", "500ms").
	HeartbeatTimeout        string `json:"heartbeat_timeout,omitempty"`
	CommitBroadcastInterval string `json:"commit_broadcast_interval,omitempty"`
	// ExtraTOML is appended verbatim to every node's configuration; it
	// must begin with a table header.
	ExtraTOML string `json:"extra_toml,omitempty"`
	// IPs, when set, gives node i its own address (roster ip and listener
	// host) instead of 127.0.0.1.
	IPs []string `json:"ips,omitempty"`
	// Netns, when set, runs node i inside the network namespace Netns[i]
	// (`ip netns exec`, which keeps the server's PID).
	Netns []string `json:"-"`
}

// IP returns node i's address.
func (l *Layout) IP(i int) string {
	if i < len(l.IPs) && l.IPs[i] != "" {
		return l.IPs[i]
	}
	return "127.0.0.1"
}

// NewLayout returns a layout of n nodes whose ports count up from base:
// tcp base+i, tcp_replica base+100+i, http (when enabled) base+200+i.
func NewLayout(dir string, n int, base uint16, http bool) (*Layout, error) {
	if n < 1 || n > 100 {
		return nil, fmt.Errorf("cluster of %d nodes: want 1..100", n)
	}
	if int(base)+200+n > 65535 || base == 0 {
		return nil, fmt.Errorf("base port %d: ports up to base+%d must fit in 1..65535", base, 200+n)
	}
	secret, err := NewSecret()
	if err != nil {
		return nil, err
	}
	l := &Layout{Name: "iggo-local", Dir: dir, HTTP: http, Secret: secret}
	for i := range n {
		p := Ports{TCP: base + uint16(i), TCPReplica: base + 100 + uint16(i)}
		if http {
			p.HTTP = base + 200 + uint16(i)
		}
		l.Nodes = append(l.Nodes, p)
	}
	return l, nil
}

// NewSecret returns a random 64-character shared secret.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate the cluster secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// NodeName returns the roster name of node i.
func NodeName(i int) string { return "node" + strconv.Itoa(i) }

// NodeDir returns node i's directory (configuration, log, data).
func (l *Layout) NodeDir(i int) string { return filepath.Join(l.Dir, NodeName(i)) }

// ConfigPath returns node i's configuration file.
func (l *Layout) ConfigPath(i int) string { return filepath.Join(l.NodeDir(i), "config.toml") }

// DataDir returns node i's system.path.
func (l *Layout) DataDir(i int) string { return filepath.Join(l.NodeDir(i), "data") }

// LogPath returns the file node i's standard output and error go to.
func (l *Layout) LogPath(i int) string { return filepath.Join(l.NodeDir(i), "server.log") }

// TCPAddr returns node i's client address.
func (l *Layout) TCPAddr(i int) string {
	return net.JoinHostPort(l.IP(i), strconv.Itoa(int(l.Nodes[i].TCP)))
}

// TCPAddrs returns every node's client address in replica order.
func (l *Layout) TCPAddrs() []string {
	out := make([]string, len(l.Nodes))
	for i := range l.Nodes {
		out[i] = l.TCPAddr(i)
	}
	return out
}

// Write creates every node directory and writes the configurations,
// LayoutFile and SecretFile.
func (l *Layout) Write() error {
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", l.Dir, err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir, SecretFile), []byte(l.Secret+"\n"), 0o600); err != nil {
		return fmt.Errorf("write the cluster secret: %w", err)
	}
	js, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the cluster layout: %w", err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir, LayoutFile), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the cluster layout: %w", err)
	}
	for i := range l.Nodes {
		if err := l.WriteConfig(i); err != nil {
			return err
		}
	}
	return nil
}

// WriteConfig creates node i's directory and writes its configuration.
func (l *Layout) WriteConfig(i int) error {
	if err := os.MkdirAll(l.NodeDir(i), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", l.NodeDir(i), err)
	}
	if err := os.WriteFile(l.ConfigPath(i), []byte(l.Config(i)), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", l.ConfigPath(i), err)
	}
	return nil
}

// ReadLayout reads the layout recorded in dir by Write.
func ReadLayout(dir string) (*Layout, error) {
	js, err := os.ReadFile(filepath.Join(dir, LayoutFile))
	if err != nil {
		return nil, fmt.Errorf("read the cluster layout: %w", err)
	}
	var l Layout
	if err := json.Unmarshal(js, &l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", filepath.Join(dir, LayoutFile), err)
	}
	if len(l.Nodes) == 0 {
		return nil, fmt.Errorf("%s lists no nodes", filepath.Join(dir, LayoutFile))
	}
	l.Dir = dir
	secret, err := os.ReadFile(filepath.Join(dir, SecretFile))
	if err != nil {
		return nil, fmt.Errorf("read the cluster secret: %w", err)
	}
	l.Secret = strings.TrimSpace(string(secret))
	return &l, nil
}

// Config returns node i's TOML configuration. The roster, the secret and
// the transports are the same on every node; system.path (absolute when
// Dir is) and the listener addresses are node i's. QUIC and WebSocket are
// off; HTTP only with l.HTTP.
func (l *Layout) Config(i int) string {
	var b strings.Builder
	q := strconv.Quote
	dataDir, err := filepath.Abs(l.DataDir(i))
	if err != nil {
		dataDir = l.DataDir(i)
	}
	fmt.Fprintf(&b, "# node %d of the local cluster %s (written by iggo)\n\n", i, q(l.Name))
	fmt.Fprintf(&b, "[system]\npath = %s\n\n", q(dataDir))
	fmt.Fprintf(&b, "[tcp]\nenabled = true\naddress = %s\n\n", q(l.TCPAddr(i)))
	fmt.Fprintf(&b, "[quic]\nenabled = false\n\n[websocket]\nenabled = false\n\n")
	if l.HTTP {
		fmt.Fprintf(&b, "[http]\nenabled = true\naddress = %s\n\n", q(net.JoinHostPort(l.IP(i), strconv.Itoa(int(l.Nodes[i].HTTP)))))
	} else {
		fmt.Fprintf(&b, "[http]\nenabled = false\n\n")
	}
	fmt.Fprintf(&b, "[cluster]\nenabled = true\nname = %s\n", q(l.Name))
	if l.HeartbeatTimeout != "" {
		fmt.Fprintf(&b, "heartbeat_timeout = %s\n", q(l.HeartbeatTimeout))
	}
	if l.CommitBroadcastInterval != "" {
		fmt.Fprintf(&b, "commit_broadcast_interval = %s\n", q(l.CommitBroadcastInterval))
	}
	fmt.Fprintf(&b, "\n[cluster.auth]\nenabled = true\nshared_secret = %s\n", q(l.Secret))
	for j, p := range l.Nodes {
		fmt.Fprintf(&b, "\n[[cluster.nodes]]\nname = %s\nip = %s\nreplica_id = %d\n", q(NodeName(j)), q(l.IP(j)), j)
		fmt.Fprintf(&b, "[cluster.nodes.ports]\ntcp = %d\ntcp_replica = %d\n", p.TCP, p.TCPReplica)
		if l.HTTP {
			fmt.Fprintf(&b, "http = %d\n", p.HTTP)
		}
	}
	if l.ExtraTOML != "" {
		fmt.Fprintf(&b, "\n%s\n", l.ExtraTOML)
	}
	return b.String()
}
