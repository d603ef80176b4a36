package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

func TestTiersTable(t *testing.T) {
	ts := []wire.PartitionTiers{
		{PartitionID: 1, LocalBytes: 3 << 20, RemoteBytes: 10 << 30, RemoteOnlyBytes: 9 << 30, PendingBytes: 1 << 20, RemoteSegments: 10, PendingSegments: 1},
		{PartitionID: 2, LocalBytes: 512},
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	tiersTable(tw, ts)
	tw.Flush()
	want := `PARTITION  LOCAL  REMOTE  REMOTE ONLY  PENDING  REMOTE SEGMENTS  PENDING SEGMENTS
1          3 MiB  10 GiB  9 GiB        1 MiB    10               1
2          512 B  0 B     0 B          0 B      0                0
`
	if b.String() != want {
		t.Fatalf("table\n%s\nwant\n%s", b.String(), want)
	}

	vs := []partitionView{{ID: 1}, {ID: 2}, {ID: 3}}
	withTierViews(vs, ts)
	if v := vs[0]; v.LocalSizeBytes == nil || *v.LocalSizeBytes != 3<<20 || *v.RemoteSizeBytes != 10<<30 || *v.RemoteOnlySizeBytes != 9<<30 ||
		*v.PendingSizeBytes != 1<<20 || *v.RemoteSegmentsCount != 10 || *v.PendingSegmentsCount != 1 {
		t.Fatalf("partition 1 view %+v", v)
	}
	if v := vs[1]; v.RemoteSizeBytes == nil || *v.RemoteSizeBytes != 0 {
		t.Fatalf("partition 2 view %+v: want explicit zeros", v)
	}
	if v := vs[2]; v.LocalSizeBytes != nil || v.PendingSegmentsCount != nil {
		t.Fatalf("partition 3, not reported, has tiers: %+v", v)
	}
}

// tieredView is the part of `topic get -o json` these tests read.
type tieredView struct {
	Partitions []struct {
		ID              uint32  `json:"id"`
		SizeBytes       uint64  `json:"size_bytes"`
		LocalSizeBytes  *uint64 `json:"local_size_bytes"`
		RemoteSizeBytes *uint64 `json:"remote_size_bytes"`
		RemoteOnly      *uint64 `json:"remote_only_size_bytes"`
		PendingSegments *uint32 `json:"pending_segments_count"`
	} `json:"partitions"`
}

// TestTopicGetTiers: with tiered storage on, `topic get` adds the table
// of local and remote bytes and -o json the fields.
func TestTopicGetTiers(t *testing.T) {
	e := newCLI(t, itest.WithTieredStorage(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, e.srv.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.CreateStream(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := c.CreateTopic(ctx, wire.NumericID(st.ID), "t", 2, wire.Uint64Option(wire.TopicOptSegmentSize, wire.MinSegmentSize))
	if err != nil {
		t.Fatal(err)
	}
	for b := range 40 {
		msgs := make([]wire.Message, 16)
		for i := range msgs {
			msgs[i] = wire.Message{ID: client.NewMessageID(), Payload: bytes.Repeat([]byte{byte('a' + b%26)}, 4<<10)}
		}
		if _, err := c.SendMessages(ctx, wire.NumericID(st.ID), wire.NumericID(tp.ID), wire.PartitioningByID(1), msgs); err != nil {
			t.Fatal(err)
		}
	}
	var v tieredView
	deadline := time.Now().Add(time.Minute)
	for {
		e.okJSON(&v, "topic", "get", "s", "t")
		if len(v.Partitions) != 2 || v.Partitions[1].RemoteOnly == nil {
			t.Fatalf("json partitions without tiers: %+v", v.Partitions)
		}
		if p := v.Partitions[1]; *p.RemoteOnly > 0 && *p.PendingSegments == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 1 not uploaded: %+v", v.Partitions[1])
		}
		time.Sleep(20 * time.Millisecond)
	}
	p := v.Partitions[1]
	if *p.LocalSizeBytes+*p.RemoteOnly != p.SizeBytes || *p.RemoteSizeBytes < *p.RemoteOnly {
		t.Fatalf("partition 1: local %d, remote %d, remote only %d, size %d", *p.LocalSizeBytes, *p.RemoteSizeBytes, *p.RemoteOnly, p.SizeBytes)
	}
	out := e.ok("topic", "get", "s", "t")
	wantLines(t, out, "PARTITION  LOCAL", "REMOTE ONLY", "PENDING SEGMENTS", fmtSize(*p.RemoteOnly))
	wantLines(t, e.ok("topic", "get", "s", "t", "-o", "yaml"), "local_size_bytes:", "remote_only_size_bytes:")
}

// TestTopicGetWithoutTiers: tiered storage off, and a server that does
// not know PARTITION_TIERS: `topic get` shows the topic without the
// table, with nothing on stderr.
func TestTopicGetWithoutTiers(t *testing.T) {
	e := newCLI(t)
	e.ok("stream", "create", "s")
	e.ok("topic", "create", "s", "t", "2")
	addr, rewritten := oldServer(t, e.srv.Addr)
	older := e.withAddr(addr)
	for name, env := range map[string]*cliEnv{"tiered storage off": e, "older server": older} {
		t.Run(name, func(t *testing.T) {
			before := rewritten.Load()
			r := env.run("topic", "get", "s", "t")
			r.wantCode(t, ExitOK)
			wantLines(t, r.stdout, "PARTITION  SEGMENTS")
			if strings.Contains(r.stdout, "REMOTE ONLY") || r.stderr != "" {
				t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			out := env.ok("topic", "get", "s", "t", "-o", "json")
			if strings.Contains(out, "local_size_bytes") || !strings.Contains(out, `"size_bytes"`) {
				t.Fatalf("json:\n%s", out)
			}
			if n := rewritten.Load() - before; (env == older) != (n == 2) {
				t.Fatalf("%d PARTITION_TIERS requests rewritten", n)
			}
		})
	}
}

// withAddr is e pointed at another server address.
func (e *cliEnv) withAddr(addr string) *cliEnv {
	env := append([]string{EnvAddr + "=" + addr}, e.environ[1:]...)
	return &cliEnv{t: e.t, srv: e.srv, environ: env}
}

// oldServer is a proxy to target that plays a server without
// PARTITION_TIERS: it rewrites that request's code to one no server
// knows, which the server answers InvalidCommand, as an older one would.
// It returns its address and the count of requests rewritten.
func oldServer(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	const codeAt = 196 // the request header's command code (wire/header.go)
	var rewritten atomic.Int64
	wg.Go(func() {
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
			conns = append(conns, cc, sc)
			mu.Unlock()
			wg.Go(func() { io.Copy(cc, sc); cc.Close() })
			wg.Go(func() {
				defer sc.Close()
				for {
					hdr := make([]byte, wire.HeaderSize)
					if _, err := io.ReadFull(cc, hdr); err != nil {
						return
					}
					frame := make([]byte, wire.PeekSize(hdr))
					copy(frame, hdr)
					if _, err := io.ReadFull(cc, frame[wire.HeaderSize:]); err != nil {
						return
					}
					var h wire.RequestHeader
					if h.Decode(frame) == nil && h.Operation == wire.OpNonReplicated && h.Code == wire.CmdPartitionTiers {
						binary.LittleEndian.PutUint32(frame[codeAt:], 1020)
						rewritten.Add(1)
					}
					if _, err := sc.Write(frame); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String(), &rewritten
}
