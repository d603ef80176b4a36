package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// replicaNode is this cluster member's replication stack, built from
// [cluster]: the replica transport on ip:ports.tcp_replica of its roster
// entry and a replication host whose groups follow the metadata group's
// leader. Groups bring their own state machines
// (replication.GroupOptions.Machine).
type replicaNode struct {
	host      *replication.Host
	transport *transport.Transport
}

// newReplicaNode builds and starts the replication stack of cl.ReplicaID.
// cl must have passed config validation (enabled, roster checked); now
// dates a generated replica certificate; maxMessage is the client frame
// limit (message_bus.max_message_size, 0 for the default), which a
// forwarded request and its reply must fit in (replicaFrameBytes). With
// partition_leaders = spread, prefer gives each partition group's replica
// list, preferred leader first (the host hands leadership to its first
// live member); otherwise partition leaders follow the metadata leader.
func newReplicaNode(cl *config.ClusterConfig, maxMessage int, now func() time.Time, log *slog.Logger, prefer func(replication.GroupID) []replication.NodeID) (*replicaNode, error) {
	self, ok := cl.Node()
	if !ok {
		return nil, fmt.Errorf("replica id %d is not in the roster", cl.ReplicaID)
	}
	tc, err := replicaTLS(cl, self, now)
	if err != nil {
		return nil, err
	}
	peers := make([]replication.NodeID, 0, len(cl.Nodes))
	for _, n := range cl.Nodes {
		peers = append(peers, replication.NodeID(n.ReplicaID))
	}
	rt := cl.RaftTiming()
	netw := &lateNetwork{}
	frame := replicaFrameBytes(maxMessage)
	hc := replication.Config{
		Self: replication.NodeID(self.ReplicaID), Peers: peers, Network: netw, Logger: log,
		Timing:       replication.Timing{Tick: rt.Tick, HeartbeatTicks: rt.HeartbeatTicks, ElectionTicks: rt.ElectionTicks},
		MaxCallBytes: frame - forwardRoom/2,
	}
	if cl.PartitionLeaders == config.PartitionLeadersMetadata || prefer == nil {
		hc.FollowLeader, hc.FollowGroup = true, replication.MetadataGroup
	} else {
		hc.Preference = prefer
	}
	h, err := replication.New(hc)
	if err != nil {
		return nil, fmt.Errorf("replication host: %w", err)
	}
	tcfg := transport.Config{
		ClusterName: cl.Name, Self: replication.NodeID(self.ReplicaID), ListenAddr: self.ReplicaAddr(), TLS: tc, Logger: log,
		MaxFrameBytes: frame,
	}
	if cl.Auth.Enabled {
		tcfg.Secret = []byte(cl.Auth.SharedSecret)
		if cl.Auth.PreviousSharedSecret != "" {
			tcfg.PreviousSecret = []byte(cl.Auth.PreviousSharedSecret)
		}
	}
	tr, err := transport.New(tcfg, h)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("replica transport: %w", err)
	}
	netw.t.Store(tr)
	for _, n := range cl.Nodes {
		tr.AddPeer(replication.NodeID(n.ReplicaID), n.ReplicaAddr())
	}
	tr.Start()
	return &replicaNode{host: h, transport: tr}, nil
}

// forwardRoom is what a forwarded partition request adds to the client's
// frame (partition.ServeForwarded's prefix), with the call's and the
// transport's envelopes, rounded up generously.
const forwardRoom = 64 << 10

// replicaFrameBytes is the replica transport's frame limit: the default
// (a raft snapshot travels in one frame), and at least a client frame of
// maxMessage bytes forwarded to a partition leader, or its reply, with
// room for the envelopes. Every node of a cluster must agree on it (a
// larger frame closes the connection), so message_bus.max_message_size
// should be the same on every node.
func replicaFrameBytes(maxMessage int) int {
	return max(transport.DefaultMaxFrameBytes, maxMessage) + forwardRoom
}

// Close stops the host, then the transport.
func (n *replicaNode) Close() error {
	n.host.Close()
	return n.transport.Close()
}

// lateNetwork forwards to the transport, which is created after the host
// (the transport needs the host as its handler). Sends before that are
// dropped, which raft tolerates.
type lateNetwork struct {
	t atomic.Pointer[transport.Transport]
}

// Send hands envs to the transport once there is one.
func (l *lateNetwork) Send(to replication.NodeID, envs []transport.Envelope) {
	if t := l.t.Load(); t != nil {
		t.Send(to, envs)
	}
}

// Reset aborts the transport's connection to peer to (replication.Resetter).
func (l *lateNetwork) Reset(to replication.NodeID) {
	if t := l.t.Load(); t != nil {
		t.Reset(to)
	}
}

// replicaTLS returns the replica port's TLS settings, or nil when TLS is
// off. With files, both sides present their certificate and verify the
// peer against ca_file (the dialer checks the roster IP). Self-signed
// generates a certificate for the roster IP and accepts any peer
// certificate: the handshake MAC then authenticates the peer.
func replicaTLS(cl *config.ClusterConfig, self config.ClusterNode, now func() time.Time) (*tls.Config, error) {
	t := cl.TLS
	if !t.Enabled {
		return nil, nil
	}
	if t.SelfSigned {
		cert, err := replicaCert(now(), self.IP)
		if err != nil {
			return nil, fmt.Errorf("replica tls: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true}, nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("replica tls: load cluster.tls.cert_file/key_file: %w", err)
	}
	pem, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("replica tls: cluster.tls.ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("replica tls: cluster.tls.ca_file holds no PEM certificate")
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert,
	}, nil
}

// replicaCert generates the self-signed certificate of a replica port
// for ip (its roster IP), usable by both ends of a connection.
func replicaCert(now time.Time, ip string) (tls.Certificate, error) {
	spec := certSpec{
		commonName: "iggo-replica",
		usage:      []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if a, err := netip.ParseAddr(ip); err == nil {
		spec.ips = []net.IP{a.AsSlice()}
	}
	return generateCert(now, spec)
}
