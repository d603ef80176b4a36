package cli

import (
	"net"
	"strings"

	"github.com/iggo-dev/iggo/internal/broker"
)

// httpAddresser is the broker's HTTP listener address, when the build
// has one.
type httpAddresser interface{ HTTPAddr() net.Addr }

// servingStatus is the STATUS= line: "serving tcp 127.0.0.1:8090, quic
// 127.0.0.1:8080, websocket 127.0.0.1:8092, http 127.0.0.1:3000".
func servingStatus(b *broker.Broker) string {
	var parts []string
	add := func(name string, a net.Addr) {
		if a != nil {
			parts = append(parts, name+" "+a.String())
		}
	}
	add("tcp", b.Addr())
	add("quic", b.QUICAddr())
	add("websocket", b.WebSocketAddr())
	if h, ok := any(b).(httpAddresser); ok {
		add("http", h.HTTPAddr())
	}
	if len(parts) == 0 {
		return "serving no transport"
	}
	return "serving " + strings.Join(parts, ", ")
}
