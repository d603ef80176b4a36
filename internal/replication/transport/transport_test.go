package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/goleak"

	"github.com/iggo-dev/iggo/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "0123456789abcdef0123456789abcdef"

// recorder is a Handler that keeps what it gets.
type recorder struct {
	mu          sync.Mutex
	got         []Envelope
	from        []NodeID
	unreachable int
	changed     chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) Deliver(from NodeID, envs []Envelope) {
	r.mu.Lock()
	r.got = append(r.got, envs...)
	for range envs {
		r.from = append(r.from, from)
	}
	r.mu.Unlock()
	signal(r.changed)
}

func (r *recorder) Unreachable(_ NodeID, envs []Envelope) {
	r.mu.Lock()
	r.unreachable += len(envs)
	r.mu.Unlock()
	signal(r.changed)
}

func (r *recorder) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got), r.unreachable
}

type node struct {
	t   *Transport
	rec *recorder
	log *testutil.SyncBuffer
}

func newNode(t *testing.T, cfg Config) *node {
	t.Helper()
	n := &node{rec: newRecorder(), log: &testutil.SyncBuffer{}}
	if cfg.ClusterName == "" {
		cfg.ClusterName = "test-cluster"
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	cfg.Logger = slog.New(slog.NewTextHandler(n.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.BackoffMin = 10 * time.Millisecond
	cfg.BackoffMax = 50 * time.Millisecond
	tr, err := New(cfg, n.rec)
	if err != nil {
		t.Fatal(err)
	}
	n.t = tr
	t.Cleanup(func() { tr.Close() })
	return n
}

// link registers every node with every other and starts them.
func link(nodes map[NodeID]*node) {
	for id, n := range nodes {
		for pid, p := range nodes {
			if pid != id {
				n.t.AddPeer(pid, p.t.Addr().String())
			}
		}
	}
	for _, n := range nodes {
		n.t.Start()
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func raftEnv(group, index uint64, data string) Envelope {
	return Envelope{Group: group, Kind: KindRaft, Msg: &raftpb.Message{
		Type: raftpb.MsgApp.Enum(), To: new(uint64(2)), From: new(uint64(1)), Term: new(uint64(3)), Index: new(index),
		Entries: []*raftpb.Entry{{Index: new(index + 1), Term: new(uint64(3)), Data: []byte(data)}},
	}}
}

func TestExchangeBatchesOneFramePerFlush(t *testing.T) {
	nodes := map[NodeID]*node{}
	for id := range NodeID(3) {
		nodes[id] = newNode(t, Config{Self: id, Secret: []byte(secret)})
	}
	link(nodes)
	waitFor(t, "connections", func() bool {
		return nodes[0].t.Connected(1) && nodes[0].t.Connected(2) && nodes[1].t.Connected(2) && nodes[2].t.Connected(0)
	})
	// 0 -> 2 and 2 -> 0 (the acceptor side sends on the same connection).
	var batch []Envelope
	for i := range 100 {
		batch = append(batch, raftEnv(uint64(i%7), uint64(i), "payload-"+string(rune('a'+i%26))))
	}
	batch = append(batch, Envelope{Kind: KindPing})
	nodes[0].t.Send(2, batch)
	nodes[2].t.Send(0, batch[:10])
	waitFor(t, "delivery to 2", func() bool { n, _ := nodes[2].rec.counts(); return n == len(batch) })
	waitFor(t, "delivery to 0", func() bool { n, _ := nodes[0].rec.counts(); return n == 10 })
	// The counters are updated after Write returns, which may be after
	// the peer already read the frame.
	waitFor(t, "send counters", func() bool { return nodes[0].t.Stats().EnvelopesSent == uint64(len(batch)) })
	if s := nodes[0].t.Stats(); s.FramesSent != 1 || s.EnvelopesSent != uint64(len(batch)) {
		t.Fatalf("one Send of %d envelopes must be one frame: %+v", len(batch), s)
	}
	rec := nodes[2].rec
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, e := range rec.got[:100] {
		want := batch[i]
		if rec.from[i] != 0 || e.Group != want.Group || e.Kind != KindRaft || e.Msg.GetIndex() != want.Msg.GetIndex() ||
			string(e.Msg.GetEntries()[0].GetData()) != string(want.Msg.GetEntries()[0].GetData()) {
			t.Fatalf("envelope %d: got %+v from %d, want %+v", i, e, rec.from[i], want)
		}
	}
	if last := rec.got[100]; last.Kind != KindPing || last.Msg != nil {
		t.Fatalf("ping: %+v", last)
	}
}

func TestHandshakeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		a, b     Config
		want     string
		accepted bool
	}{
		{"cluster name", Config{ClusterName: "one", Secret: []byte(secret)}, Config{ClusterName: "two", Secret: []byte(secret)}, "cluster name mismatch", false},
		{"secret", Config{Secret: []byte(secret)}, Config{Secret: []byte(strings.ToUpper(secret))}, "authentication failed", false},
		{"auth on one side only", Config{Secret: []byte(secret)}, Config{}, "authentication failed", false},
		{"previous secret accepted", Config{Secret: []byte(secret)}, Config{Secret: []byte("ffffffffffffffffffffffffffffffff"), PreviousSecret: []byte(secret)}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.a.Self, tc.b.Self = 0, 1
			a, b := newNode(t, tc.a), newNode(t, tc.b)
			link(map[NodeID]*node{0: a, 1: b})
			if tc.accepted {
				waitFor(t, "connection", func() bool { return a.t.Connected(1) && b.t.Connected(0) })
				a.t.Send(1, []Envelope{raftEnv(1, 1, "x")})
				waitFor(t, "delivery", func() bool { n, _ := b.rec.counts(); return n == 1 })
				return
			}
			waitFor(t, "refusal logged on both sides", func() bool {
				return strings.Contains(a.log.String(), tc.want) && strings.Contains(b.log.String(), tc.want)
			})
			if a.t.Connected(1) || b.t.Connected(0) {
				t.Fatal("a refused handshake must leave no connection")
			}
			a.t.Send(1, []Envelope{raftEnv(1, 1, "x")})
			if n, _ := b.rec.counts(); n != 0 {
				t.Fatal("nothing may be delivered over a refused connection")
			}
			if _, u := a.rec.counts(); u != 1 {
				t.Fatalf("a send without a connection is reported unreachable, got %d", u)
			}
		})
	}
}

// rawHandshake authenticates a plain TCP connection to n as replica from,
// so the test can then write whatever it likes.
func rawHandshake(t *testing.T, n *node, from NodeID, cfg Config) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", n.t.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fake := &Transport{cfg: cfg, clusterID: ClusterID("test-cluster"), keys: [][]byte{cfg.Secret}}
	fake.cfg.Self = from
	fake.cfg.HandshakeTimeout = 5 * time.Second
	if err := fake.dialHandshake(c, n.t.cfg.Self); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return c
}

func TestGarbageClosesTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload func() []byte
		want    string
	}{
		{"bad checksum", func() []byte {
			f := appendFrame(nil, frameBatch, []byte{1, 2, 3})
			f[4] ^= 0xff
			return f
		}, "garbage"},
		{"huge length", func() []byte { return []byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0} }, "garbage"},
		{"malformed batch", func() []byte { return appendFrame(nil, frameBatch, []byte{5, 1, 1, 9}) }, "malformed batch"},
		{"handshake frame after welcome", func() []byte { return appendFrame(nil, frameHello, nil) }, "unexpected frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newNode(t, Config{Self: 1, Secret: []byte(secret)})
			b.t.AddPeer(0, "127.0.0.1:1") // never dialed: 0 dials 1
			b.t.Start()
			c := rawHandshake(t, b, 0, Config{Secret: []byte(secret)})
			defer c.Close()
			waitFor(t, "attach", func() bool { return b.t.Connected(0) })
			if _, err := c.Write(tc.payload()); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "log line", func() bool { return strings.Contains(b.log.String(), tc.want) })
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatal("the connection must be closed after garbage")
			}
			waitFor(t, "detach", func() bool { return !b.t.Connected(0) })
			if n, _ := b.rec.counts(); n != 0 {
				t.Fatal("garbage must deliver nothing")
			}
		})
	}
	t.Run("garbage before the handshake", func(t *testing.T) {
		b := newNode(t, Config{Self: 1, Secret: []byte(secret)})
		b.t.AddPeer(0, "127.0.0.1:1")
		b.t.Start()
		c, err := net.Dial("tcp", b.t.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		waitFor(t, "log line", func() bool { return strings.Contains(b.log.String(), "replica connection refused") })
	})
}

func TestQueueBoundAndOversizeAreReported(t *testing.T) {
	a := newNode(t, Config{Self: 0, Secret: []byte(secret), QueueEnvelopes: 10, MaxFrameBytes: 4096})
	b := newNode(t, Config{Self: 1, Secret: []byte(secret), MaxFrameBytes: 4096})
	link(map[NodeID]*node{0: a, 1: b})
	waitFor(t, "connection", func() bool { return a.t.Connected(1) })
	var batch []Envelope
	for i := range 25 {
		batch = append(batch, raftEnv(1, uint64(i), "x"))
	}
	a.t.Send(1, batch)
	if _, u := a.rec.counts(); u != 15 {
		t.Fatalf("a queue of 10 must report 15 of 25 unreachable, got %d", u)
	}
	waitFor(t, "the 10 queued", func() bool { n, _ := b.rec.counts(); return n == 10 })
	a.t.Send(1, []Envelope{raftEnv(1, 1, strings.Repeat("y", 5000)), raftEnv(1, 2, "small")})
	waitFor(t, "small one delivered", func() bool { n, _ := b.rec.counts(); return n == 11 })
	if _, u := a.rec.counts(); u != 16 {
		t.Fatalf("an oversized message is reported unreachable, got %d", u)
	}
}

func TestReconnectAfterPeerRestart(t *testing.T) {
	a := newNode(t, Config{Self: 0, Secret: []byte(secret)})
	b := newNode(t, Config{Self: 1, Secret: []byte(secret)})
	link(map[NodeID]*node{0: a, 1: b})
	waitFor(t, "connection", func() bool { return a.t.Connected(1) })
	addr := b.t.Addr().String()
	b.t.Close()
	waitFor(t, "a notices", func() bool { return !a.t.Connected(1) })
	b2 := newNode(t, Config{Self: 1, Secret: []byte(secret), ListenAddr: addr})
	b2.t.AddPeer(0, a.t.Addr().String())
	b2.t.Start()
	waitFor(t, "reconnected", func() bool { return a.t.Connected(1) && b2.t.Connected(0) })
	a.t.Send(1, []Envelope{raftEnv(4, 4, "after restart")})
	waitFor(t, "delivery", func() bool { n, _ := b2.rec.counts(); return n == 1 })
}

func TestTLS13(t *testing.T) {
	cert, pool := selfSigned(t)
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	a := newNode(t, Config{Self: 0, Secret: []byte(secret), TLS: tc})
	b := newNode(t, Config{Self: 1, Secret: []byte(secret), TLS: tc})
	link(map[NodeID]*node{0: a, 1: b})
	waitFor(t, "connection", func() bool { return a.t.Connected(1) && b.t.Connected(0) })
	a.t.Send(1, []Envelope{raftEnv(1, 1, "over tls")})
	b.t.Send(0, []Envelope{raftEnv(1, 2, "back")})
	waitFor(t, "delivery", func() bool { n, _ := b.rec.counts(); m, _ := a.rec.counts(); return n == 1 && m == 1 })

	// A plain-TCP peer cannot talk to a TLS one.
	c := newNode(t, Config{Self: 2, Secret: []byte(secret)})
	a.t.AddPeer(2, c.t.Addr().String())
	c.t.AddPeer(0, a.t.Addr().String())
	c.t.Start()
	waitFor(t, "refusal", func() bool { return strings.Contains(c.log.String(), "replica connection refused") })
	if a.t.Connected(2) {
		t.Fatal("TLS and plain peers must not connect")
	}
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "replica"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestTwoNodesClaimOneID: two processes that both say they are replica 0
// keep displacing each other's connection at replica 1; replica 1 logs
// that two nodes may claim the id.
func TestTwoNodesClaimOneID(t *testing.T) {
	b := newNode(t, Config{Self: 1, Secret: []byte(secret)})
	a1 := newNode(t, Config{Self: 0, Secret: []byte(secret)})
	a2 := newNode(t, Config{Self: 0, Secret: []byte(secret)})
	b.t.AddPeer(0, a1.t.Addr().String())
	a1.t.AddPeer(1, b.t.Addr().String())
	a2.t.AddPeer(1, b.t.Addr().String())
	for _, n := range []*node{b, a1, a2} {
		n.t.Start()
	}
	waitFor(t, "the duplicate-id warning", func() bool {
		return strings.Contains(b.log.String(), "two nodes may claim this replica id")
	})
}
