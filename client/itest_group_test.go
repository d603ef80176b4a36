package client_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

// groupMember runs one consumer-group member in the background and
// reports every message it handles.
type groupMember struct {
	co     *client.Consumer
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	assigns []client.Assignment
}

func startMember(t *testing.T, c *client.Client, seen chan<- string, opts ...client.ConsumerOption) *groupMember {
	t.Helper()
	m := &groupMember{done: make(chan struct{})}
	base := []client.ConsumerOption{
		client.WithCreateGroup(), client.WithPollCount(50), client.WithPollInterval(time.Millisecond),
		client.WithSyncInterval(20 * time.Millisecond),
		client.WithRebalanceHandler(func(a client.Assignment) {
			m.mu.Lock()
			m.assigns = append(m.assigns, a)
			m.mu.Unlock()
		}),
	}
	co, err := c.NewConsumer(testCtx(t), streamID, topicID, wire.GroupConsumer(wire.NamedID("workers")), append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.co = co
	ctx, cancel := context.WithCancel(testCtx(t))
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for msg, err := range co.Messages(ctx) {
			if err != nil {
				t.Logf("member: %v", err)
				continue
			}
			seen <- string(msg.Payload)
		}
	}()
	return m
}

// stop ends the member's loop and closes it (leaving the group).
func (m *groupMember) stop(t *testing.T) {
	m.cancel()
	<-m.done
	if err := m.co.Close(testCtx(t)); err != nil {
		t.Errorf("close member: %v", err)
	}
}

func (m *groupMember) lastAssignment() client.Assignment {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.assigns) == 0 {
		return client.Assignment{}
	}
	return m.assigns[len(m.assigns)-1]
}

// produceKeyed sends n messages "key-<i%keys>/<i>" and waits for them.
func produceKeyed(t *testing.T, c *client.Client, parts uint32, from, n, keys int) {
	t.Helper()
	ctx := testCtx(t)
	p, err := c.NewProducer(ctx, streamID, topicID, client.WithLinger(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		key := "key-" + strconv.Itoa(i%keys)
		if err := p.Send(ctx, client.Message{Key: []byte(key), Payload: []byte(key + "/" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// await reads n payloads from seen, failing on a duplicate or a key out
// of order; it returns them.
func await(t *testing.T, seen <-chan string, n int, last map[string]int) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case pl := <-seen:
			if got[pl] {
				t.Fatalf("message %s consumed twice", pl)
			}
			got[pl] = true
			key, seqStr, _ := strings.Cut(pl, "/")
			seq, _ := strconv.Atoi(seqStr)
			if prev, ok := last[key]; ok && seq <= prev {
				t.Fatalf("key %s out of order: %d after %d", key, seq, prev)
			}
			last[key] = seq
		case <-timeout:
			t.Fatalf("consumed %d of %d messages", len(got), n)
		}
	}
	return got
}

// TestBrokerGroupConsumption: two members split a topic's partitions and
// consume every message once, in key order; when one leaves, the other
// takes over all partitions and consumes what follows.
func TestBrokerGroupConsumption(t *testing.T) {
	const parts = 4
	s := dataBroker(t, parts)
	c1, c2 := dialRoot(t, s), dialRoot(t, s)
	seen := make(chan string, 1024)
	a := startMember(t, c1, seen)
	b := startMember(t, c2, seen)
	produceKeyed(t, c1, parts, 0, 2000, 13)
	last := map[string]int{}
	await(t, seen, 2000, last)
	pa, pb := a.lastAssignment().Partitions, b.lastAssignment().Partitions
	if len(pa)+len(pb) != parts || len(pa) == 0 || len(pb) == 0 {
		t.Fatalf("assignments %v and %v", pa, pb)
	}
	b.stop(t)
	produceKeyed(t, c1, parts, 2000, 400, 13)
	await(t, seen, 400, last)
	if got := a.lastAssignment().Partitions; len(got) != parts {
		t.Fatalf("after the other member left: %v", got)
	}
	a.stop(t)
	select {
	case pl := <-seen:
		t.Fatalf("extra message %s", pl)
	default:
	}
}

// TestBrokerGroupReconnect breaks a member's connection while it
// consumes: the server drops the membership with the session, and the
// consumer re-syncs, joins again and carries on (at-least-once).
func TestBrokerGroupReconnect(t *testing.T) {
	const parts = 2
	s := dataBroker(t, parts)
	var mu sync.Mutex
	var conns []net.Conn
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
		return nc, err
	}
	c, err := client.Dial(testCtx(t), s.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword), client.WithDialer(dialer),
		client.WithReconnect(client.ReconnectPolicy{InitialBackoff: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	producer := dialRoot(t, s)
	seen := make(chan string, 1024)
	m := startMember(t, c, seen)
	defer m.stop(t)
	produceKeyed(t, producer, parts, 0, 300, 5)
	got := map[string]bool{}
	for len(got) < 100 {
		got[<-seen] = true
	}
	mu.Lock()
	conns[0].Close()
	mu.Unlock()
	produceKeyed(t, producer, parts, 300, 300, 5)
	timeout := time.After(30 * time.Second)
	for len(got) < 600 {
		select {
		case pl := <-seen:
			got[pl] = true
		case <-timeout:
			t.Fatalf("consumed %d of 600 distinct messages after the reconnect", len(got))
		}
	}
	mu.Lock()
	n := len(conns)
	mu.Unlock()
	if n < 2 {
		t.Fatal("the client did not reconnect")
	}
}
