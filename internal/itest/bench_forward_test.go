package itest

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// BenchmarkForwardHop measures what forwarding costs: the same requests
// sent through the leader of a 3-node cluster and through a follower,
// which forwards them to the leader over the replica transport and relays
// the reply (docs/CLUSTER.md §7.3). Sub-benchmarks: sends of one 100-byte
// message (ns/op is the round trip) and of 1000 × 1 KiB, and polls of
// 1000 × 1 KiB; each over one raw connection, one request at a time.
// cpu-µs/op is the CPU of the cluster's processes per request (Linux).
//
// By default the cluster runs in this process. IGGO_FORWARD_LEADER and
// IGGO_FORWARD_FOLLOWER (host:port, root user iggy/iggy) point it at
// running nodes instead, IGGO_FORWARD_PIDS (comma-separated) at their
// processes for the CPU figure: bench/forward.sh runs it so against
// `iggo cluster start`.
func BenchmarkForwardHop(b *testing.B) {
	env := forwardTargets(b)
	admin := dialAddr(b, env.leader)
	admin.LoginRoot()
	stream, topic := wire.NamedID("fwd-bench"), wire.NamedID("t")
	admin.Command(wire.OpDeleteStream, &wire.DeleteStream{StreamID: stream}) // a previous run's
	ExpectOK(b, admin.Command(wire.OpCreateStream, &wire.CreateStream{Name: "fwd-bench"}))
	ExpectOK(b, admin.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: stream, PartitionsCount: 1, Name: "t"}))
	b.Cleanup(func() { admin.Command(wire.OpDeleteStream, &wire.DeleteStream{StreamID: stream}) })
	// next is the offset the next message gets.
	next := func() uint64 {
		p := admin.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: stream, TopicID: topic,
			Partition: wire.SomePartition(0), Strategy: wire.LastStrategy(), Count: 1})
		if p.Count == 0 {
			return 0
		}
		return p.CurrentOffset + 1
	}
	// Leader and follower alternate, IGGO_FORWARD_ROUNDS times (default
	// 1), so a log that grows (and a disk that slows) weighs on both.
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("IGGO_FORWARD_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for range rounds {
		for _, size := range []struct {
			name       string
			n, payload int
		}{{"1x100B", 1, 100}, {"1000x1KiB", 1000, 1024}} {
			body := SendBody(stream, topic, wire.PartitioningByID(0), Batch(b, 1, Payloads(size.n, size.payload, "fwd")...))
			for _, via := range []string{"leader", "follower"} {
				b.Run("send-"+size.name+"/"+via, func(b *testing.B) { benchSendVia(b, env, via, body, size.n*size.payload) })
			}
		}
	}
	// The polls read 20 batches of 1000 × 1 KiB, filled now.
	const fill = 20
	from := next()
	body := SendBody(stream, topic, wire.PartitioningByID(0), Batch(b, 1, Payloads(1000, 1024, "fwd")...))
	for range fill {
		ExpectPlain(b, admin.SendMessages(body))
	}
	for range rounds {
		for _, via := range []string{"leader", "follower"} {
			b.Run("poll-1000x1KiB/"+via, func(b *testing.B) { benchPollVia(b, env, via, stream, topic, from, fill) })
		}
	}
}

// benchSendVia sends body (of payload bytes) through node via, one
// request at a time.
func benchSendVia(b *testing.B, env *forwardEnv, via string, body []byte, payload int) {
	c := dialAddr(b, env.addr(via))
	c.LoginRoot()
	frame := EncodeRequest(c.SendHeader(wire.OpSendMessages), body)
	req := c.Next
	buf := make([]byte, 64<<10)
	send := func() {
		req++
		binary.LittleEndian.PutUint64(frame[requestOffset:], req)
		roundTrip(b, c.Conn, frame, buf)
	}
	send() // the first may wait for the partition's first leader
	b.SetBytes(int64(payload))
	cpu := env.cpu()
	b.ResetTimer()
	for range b.N {
		send()
	}
	b.StopTimer()
	env.report(b, cpu)
}

// benchPollVia polls 1000 messages at a time through node via, from
// offset from on, over span batches.
func benchPollVia(b *testing.B, env *forwardEnv, via string, stream, topic wire.Identifier, from, span uint64) {
	c := dialAddr(b, env.addr(via))
	c.LoginRoot()
	req := wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: stream, TopicID: topic,
		Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(0), Count: 1000}
	frame := EncodeRequest(c.Header(wire.OpNonReplicated, wire.CmdPollMessages), req.AppendTo(nil))
	valueAt := len(frame) - 4 - 1 - 8 // the strategy's value
	buf := make([]byte, 4<<20)
	b.SetBytes(1000 * 1024)
	cpu := env.cpu()
	b.ResetTimer()
	for i := range b.N {
		binary.LittleEndian.PutUint64(frame[valueAt:], from+uint64(i)%span*1000)
		roundTrip(b, c.Conn, frame, buf)
	}
	b.StopTimer()
	env.report(b, cpu)
}

// forwardEnv is where BenchmarkForwardHop sends.
type forwardEnv struct {
	leader, follower string
	pids             []int
}

func (e *forwardEnv) addr(via string) string {
	if via == "leader" {
		return e.leader
	}
	return e.follower
}

// forwardTargets returns the external nodes named by the environment, or
// starts a 3-node cluster in this process (replica 0 leads).
func forwardTargets(b *testing.B) *forwardEnv {
	b.Helper()
	if l := os.Getenv("IGGO_FORWARD_LEADER"); l != "" {
		e := &forwardEnv{leader: l, follower: os.Getenv("IGGO_FORWARD_FOLLOWER")}
		for _, p := range strings.Split(os.Getenv("IGGO_FORWARD_PIDS"), ",") {
			if pid, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
				e.pids = append(e.pids, pid)
			}
		}
		return e
	}
	tc := startCluster(b, 3)
	return &forwardEnv{leader: tc.nodes[0].Addr, follower: tc.nodes[1].Addr, pids: []int{os.Getpid()}}
}

// cpu is the CPU time used so far by the processes (0 when unknown).
func (e *forwardEnv) cpu() time.Duration {
	var total time.Duration
	for _, pid := range e.pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0
		}
		// Fields after the command (which may hold spaces): state is the
		// first, utime and stime the 12th and 13th (clock ticks, 100/s).
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0
		}
		u, err1 := strconv.ParseUint(f[11], 10, 64)
		k, err2 := strconv.ParseUint(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			return 0
		}
		total += time.Duration(u+k) * 10 * time.Millisecond
	}
	return total
}

// report adds the CPU per request since before.
func (e *forwardEnv) report(b *testing.B, before time.Duration) {
	if after := e.cpu(); after > 0 && b.N > 0 {
		b.ReportMetric(float64((after-before).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// dialAddr connects a raw client to addr.
func dialAddr(t testing.TB, addr string) *Client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Client{t: t, Conn: nc, ID: NewClientID(), Next: 1}
}

// roundTrip writes frame and reads its answer into buf, failing on
// anything but a status-0 reply.
func roundTrip(b *testing.B, c net.Conn, frame, buf []byte) {
	if _, err := c.Write(frame); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf[:wire.HeaderSize]); err != nil {
		b.Fatal(err)
	}
	var h wire.ReplyHeader
	if err := h.Decode(buf[:wire.HeaderSize]); err != nil || h.Status != 0 {
		b.Fatalf("answer %+v: %v", h, err)
	}
	n := int(h.Size) - wire.HeaderSize
	if n > len(buf) {
		b.Fatalf("reply of %d bytes", n)
	}
	if _, err := io.ReadFull(c, buf[:n]); err != nil {
		b.Fatal(err)
	}
}
