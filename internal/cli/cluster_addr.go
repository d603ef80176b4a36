package cli

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
)

// envTCPAddress is the server's TCP address variable (tcp.address).
const envTCPAddress = "IGGY_TCP_ADDRESS"

// clusterIP reads IGGY_TCP_ADDRESS for `iggo cluster start`: the IP the
// nodes use (roster and listeners), "" for the default 127.0.0.1. A
// wildcard IP (0.0.0.0, ::) cannot be a roster address, since the nodes
// dial each other there: the roster stays on 127.0.0.1, and the nodes,
// which inherit the environment, bind their client port on the wildcard.
// The port is never used: node i's ports come from --base-port.
func clusterIP(out io.Writer, value string) (string, error) {
	if value == "" {
		return "", nil
	}
	host, _, err := net.SplitHostPort(value)
	if err != nil {
		return "", usagef("%s=%s: want IP:PORT: %v", envTCPAddress, value, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "", usagef("%s=%s: a local cluster needs a literal IP, not %q", envTCPAddress, value, host)
	}
	if ip.IsUnspecified() {
		fmt.Fprintf(out, "%s=%s: the nodes accept clients on every interface; they reach each other on 127.0.0.1; ports come from --base-port\n", envTCPAddress, value)
		return "", nil
	}
	fmt.Fprintf(out, "%s=%s: the nodes listen on %s; ports come from --base-port\n", envTCPAddress, value, ip)
	return ip.String(), nil
}

// applyClusterIP sets every node of a new layout to ip ("" keeps
// 127.0.0.1); for a recorded layout it checks that the nodes already use
// ip, since moving a cluster to another address needs --fresh.
func applyClusterIP(l *local.Layout, ip string, recorded bool) error {
	if ip == "" {
		return nil
	}
	if !recorded {
		l.IPs = slices.Repeat([]string{ip}, len(l.Nodes))
		return nil
	}
	for i := range l.Nodes {
		if l.IP(i) != ip {
			return usagef("%s asks for %s but %s holds a cluster on %s; use --fresh to replace it, or unset %s", envTCPAddress, ip, l.Dir, l.IP(i), envTCPAddress)
		}
	}
	return nil
}
