package itest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// mapProxy stands in front of one node and rewrites two kinds of reply on
// the way back: GET_CLUSTER_METADATA and CLUSTER_PARTITIONS name the
// proxy's port for that node (so the SDK keeps its main connection through
// the proxy), and, while lie is set, CLUSTER_PARTITIONS names replica
// lie-1 as the leader of partition 1. Replies are matched to requests in
// order, per connection.
type mapProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	self   uint8 // the replica id of the node behind the proxy
	lie    atomic.Int32
	wg     sync.WaitGroup
}

func newMapProxy(t *testing.T, target string, self uint8) *mapProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &mapProxy{t: t, ln: ln, target: target, self: self}
	var mu sync.Mutex
	var live []net.Conn
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			sc, err := net.Dial("tcp", target)
			if err != nil {
				cc.Close()
				continue
			}
			mu.Lock()
			live = append(live, cc, sc)
			mu.Unlock()
			codes := make(chan wire.Command, 1024)
			p.wg.Add(2)
			go func() { defer p.wg.Done(); p.pump(cc, sc, codes, true) }()
			go func() { defer p.wg.Done(); p.pump(sc, cc, codes, false) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range live {
			c.Close()
		}
		mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *mapProxy) port() uint16 { return uint16(p.ln.Addr().(*net.TCPAddr).Port) }

func (p *mapProxy) pump(src, dst net.Conn, codes chan wire.Command, toServer bool) {
	defer src.Close()
	defer dst.Close()
	hdr := make([]byte, wire.HeaderSize)
	for {
		if _, err := io.ReadFull(src, hdr); err != nil {
			return
		}
		frame := make([]byte, wire.PeekSize(hdr))
		copy(frame, hdr)
		if _, err := io.ReadFull(src, frame[wire.HeaderSize:]); err != nil {
			return
		}
		switch {
		case toServer:
			var h wire.RequestHeader
			h.Decode(frame)
			code, _ := h.Command()
			if h.Operation == wire.OpRegister {
				code = wire.CmdLoginRegister
			}
			codes <- code
		case wire.PeekKind(frame) == wire.KindReply:
			frame = p.rewrite(<-codes, frame)
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
	}
}

// rewrite patches a reply to code (same length: only ports and a leader
// byte change).
func (p *mapProxy) rewrite(code wire.Command, frame []byte) []byte {
	var h wire.ReplyHeader
	if h.Decode(frame) != nil || h.Status != 0 {
		return frame
	}
	body := frame[wire.HeaderSize:]
	var out []byte
	switch code {
	case wire.CmdGetClusterMetadata:
		var m wire.ClusterMetadata
		if m.Decode(body) != nil {
			return frame
		}
		m.Nodes[p.self].TCPPort = p.port()
		out = m.AppendTo(nil)
	case wire.CmdClusterPartitions:
		var m wire.PartitionMap
		if m.Decode(body) != nil {
			return frame
		}
		m.Nodes[p.self].TCPPort = p.port()
		if lie := p.lie.Load(); lie > 0 {
			for i := range m.Topics {
				for j := range m.Topics[i].Partitions {
					if pl := &m.Topics[i].Partitions[j]; pl.PartitionID == 1 {
						pl.Leader, pl.HasLeader = uint8(lie-1), true
					}
				}
			}
		}
		out = m.AppendTo(nil)
	default:
		return frame
	}
	if len(out) != len(body) {
		p.t.Errorf("rewritten %v reply changed length", code)
		return frame
	}
	copy(body, out)
	return frame
}

// TestClusterSDKRouting drives the SDK's partition routing against three
// real brokers. A proxy in front of the leader makes the map name node 1
// as partition 1's leader although node 0 leads every partition: the SDK
// dials node 1, attaches that connection to its session (not a login),
// gets 58 there (node 1 is a follower), and resends the same request on
// the main connection, where it is stored once. Every message is stored
// exactly once, in order, and the main connection's session stays valid
// for metadata writes (an attach does not fence it as a second Register
// would).
func TestClusterSDKRouting(t *testing.T) {
	tc := startCluster(t, 3)
	px := newMapProxy(t, tc.nodes[0].Addr, 0)
	px.lie.Store(2) // replica 1 + 1
	var logs testutil.SyncBuffer
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, px.ln.Addr().String(), client.WithCredentials(RootUsername, RootPassword),
		client.WithClusterPolicy(client.ClusterPolicy{PartitionMapMinInterval: 20 * time.Millisecond}),
		client.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Addr() != px.ln.Addr().String() {
		t.Fatalf("client moved to %s, want to stay on the proxy", c.Addr())
	}
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, wire.NamedID("s"), "t", 2); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		for p := range uint32(2) {
			msg := []wire.Message{{Payload: []byte(fmt.Sprintf("p%d-%d", p, i))}}
			if _, err := c.SendMessages(ctx, wire.NamedID("s"), wire.NamedID("t"), wire.PartitioningByID(p), msg); err != nil {
				t.Fatalf("send %d to partition %d: %v", i, p, err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	node1 := tc.roster[1].Ports.TCP
	if !strings.Contains(logs.String(), "partition routing: connected to node") || !strings.Contains(logs.String(), fmt.Sprintf("127.0.0.1:%d", node1)) {
		t.Fatalf("the SDK never attached to node 1:\n%s", logs.String())
	}
	// The main connection's session is intact: a metadata write commits.
	if _, err := c.CreateStream(ctx, "after-routing"); err != nil {
		t.Fatalf("metadata write after routing: %v", err)
	}
	for p := range uint32(2) {
		got, err := c.PollMessages(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t"),
			Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(0), Count: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != n {
			t.Fatalf("partition %d holds %d messages, want %d (once each)", p, got.Count, n)
		}
		it := got.Messages()
		i := 0
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if want := fmt.Sprintf("p%d-%d", p, i); string(m.Payload) != want {
				t.Fatalf("partition %d offset %d holds %q, want %q", p, i, m.Payload, want)
			}
			i++
		}
	}
}
