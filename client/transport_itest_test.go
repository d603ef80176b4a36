package client_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/client"
	clientquic "github.com/iggo-dev/iggo/client/quic"
	clientws "github.com/iggo-dev/iggo/client/ws"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

// TestBrokerTransports: the SDK over QUIC, WebSocket and WSS, dialed by
// address and by connection string: login, metadata, pipelined sends
// from many goroutines and polls that return the sent bytes.
func TestBrokerTransports(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport client.Transport
		itest     []itest.Option
		wireT     wire.Transport
		scheme    string
		query     string
		each      int // messages per sender
	}{
		// With the reference's default of one stream at a time, every
		// request waits for the previous stream's credit (about one
		// delayed ACK): few messages.
		{"quic", clientquic.Transport{}, []itest.Option{itest.WithTransport(itest.TransportQUIC)}, wire.TransportQUIC, "iggy+quic", "", 2},
		{"quic-100-streams", clientquic.Transport{}, []itest.Option{itest.WithTransport(itest.TransportQUIC), itest.WithConfig(func(c *config.Config) { c.QUIC.MaxConcurrentBidiStreams = 100 })}, wire.TransportQUIC, "iggy+quic", "", 25},
		{"ws", clientws.Transport{}, []itest.Option{itest.WithTransport(itest.TransportWS)}, wire.TransportWebSocket, "iggy+ws", "", 25},
		{"wss", clientws.Transport{}, []itest.Option{itest.WithTransport(itest.TransportWS), itest.WithTLS()}, wire.TransportWebSocket, "iggy+ws", "?tls=true&tls_domain=localhost", 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := dataBroker(t, 2, tc.itest...)
			ctx := testCtx(t)
			opts := []client.Option{client.WithTransport(tc.transport), client.WithCredentials(itest.RootUsername, itest.RootPassword)}
			if s.ClientTLS != nil {
				opts = append(opts, client.WithTLS(s.ClientTLS))
			}
			c, err := client.Dial(ctx, s.TransportAddr, opts...)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.Close()
			me, err := c.GetMe(ctx)
			if err != nil || me.Transport != tc.wireT {
				t.Fatalf("GET_ME %+v, %v", me, err)
			}
			// Pipelined sends from several goroutines, then one poll.
			const senders = 8
			each := tc.each
			errs := make(chan error, senders)
			for g := range senders {
				go func() {
					for i := range each {
						m := wire.Message{Payload: fmt.Appendf(nil, "g%d-%03d-%s", g, i, bytes.Repeat([]byte{'x'}, 100*i))}
						if _, err := c.SendMessages(ctx, streamID, topicID, wire.PartitioningByID(0), []wire.Message{m}); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range senders {
				if err := <-errs; err != nil {
					t.Fatalf("send: %v", err)
				}
			}
			got := pollAll(t, c, 0)
			if len(got) != senders*each {
				t.Fatalf("polled %d messages, want %d", len(got), senders*each)
			}
			seen := map[string]bool{}
			for _, p := range got {
				seen[p] = true
			}
			for g := range senders {
				for i := range each {
					if p := fmt.Sprintf("g%d-%03d-%s", g, i, bytes.Repeat([]byte{'x'}, 100*i)); !seen[p] {
						t.Fatalf("message %q missing", p[:8])
					}
				}
			}
			// The same server through a connection string.
			cs := tc.scheme + "://" + itest.RootUsername + ":" + itest.RootPassword + "@" + s.TransportAddr + tc.query
			var more []client.Option
			if s.ClientTLS != nil {
				more = append(more, client.WithTLS(s.ClientTLS)) // trust the test CA (explicit options win)
			}
			c2, err := client.Dial(ctx, cs, append([]client.Option{client.WithTransport(tc.transport)}, more...)...)
			if err != nil {
				t.Fatalf("dial %s: %v", cs, err)
			}
			defer c2.Close()
			if len(pollAll(t, c2, 0)) != senders*each {
				t.Fatal("connection-string client polled a different log")
			}
			if _, err := client.Dial(ctx, cs); err == nil {
				t.Fatal("a QUIC/WS connection string dialed without its transport")
			}
		})
	}
}
