package replication

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// Node is one cluster member's replication stack built from [cluster]: the
// replica transport on ip:ports.tcp_replica of its roster entry and a Host
// whose groups follow the metadata group's leader.
type Node struct {
	Host      *Host
	Transport *transport.Transport
}

// MetadataGroup is the group id of the metadata group; partition groups
// use other ids.
const MetadataGroup GroupID = 0

// NewNode builds and starts the replication stack of cl.ReplicaID. cl must
// have passed config validation (enabled, roster checked). Groups bring
// their own state machines (GroupOptions.Machine).
func NewNode(cl *config.ClusterConfig, log *slog.Logger) (*Node, error) {
	self, ok := cl.Node()
	if !ok {
		return nil, fmt.Errorf("replication: replica id %d is not in the roster", cl.ReplicaID)
	}
	if log == nil {
		log = slog.Default()
	}
	tc, err := replicaTLS(cl, self)
	if err != nil {
		return nil, err
	}
	peers := make([]NodeID, 0, len(cl.Nodes))
	for _, n := range cl.Nodes {
		peers = append(peers, NodeID(n.ReplicaID))
	}
	rt := cl.RaftTiming()
	netw := &lateNetwork{}
	h, err := New(Config{
		Self: NodeID(self.ReplicaID), Peers: peers, Network: netw, Logger: log,
		Timing:       Timing{Tick: rt.Tick, HeartbeatTicks: rt.HeartbeatTicks, ElectionTicks: rt.ElectionTicks},
		FollowLeader: true, FollowGroup: MetadataGroup,
	})
	if err != nil {
		return nil, err
	}
	tcfg := transport.Config{
		ClusterName: cl.Name, Self: NodeID(self.ReplicaID), ListenAddr: self.ReplicaAddr(), TLS: tc, Logger: log,
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
		return nil, err
	}
	netw.t.Store(tr)
	for _, n := range cl.Nodes {
		tr.AddPeer(NodeID(n.ReplicaID), n.ReplicaAddr())
	}
	tr.Start()
	return &Node{Host: h, Transport: tr}, nil
}

// Close stops the host, then the transport.
func (n *Node) Close() error {
	n.Host.Close()
	return n.Transport.Close()
}

// lateNetwork forwards to the transport, which is created after the host
// (the transport needs the host as its handler). Sends before that are
// dropped, which raft tolerates.
type lateNetwork struct {
	t atomic.Pointer[transport.Transport]
}

func (l *lateNetwork) Send(to NodeID, envs []transport.Envelope) {
	if t := l.t.Load(); t != nil {
		t.Send(to, envs)
	}
}

// replicaTLS returns the replica port's TLS settings, or nil when TLS is
// off. With files, both sides present their certificate and verify the
// peer against ca_file (the dialer checks the roster IP). Self-signed
// generates a certificate for the roster IP and accepts any peer
// certificate: the handshake MAC then authenticates the peer.
func replicaTLS(cl *config.ClusterConfig, self config.ClusterNode) (*tls.Config, error) {
	t := cl.TLS
	if !t.Enabled {
		return nil, nil
	}
	if t.SelfSigned {
		cert, err := selfSignedCert(self.IP)
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

// selfSignedCert makes an ECDSA P-256 certificate for ip, valid one year.
func selfSignedCert(ip string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "iggo-replica"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if a, err := netip.ParseAddr(ip); err == nil {
		tmpl.IPAddresses = []net.IP{a.AsSlice()}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("create certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
