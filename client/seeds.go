package client

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// errNoAddress is returned by Dial when neither addr nor
// WithServerAddresses names a server.
var errNoAddress = errors.New("client: no server address")

// parseAddrList splits a comma-separated list of seeds
// ("10.0.0.1:8090,10.0.0.2:8090"; blanks around commas are ignored). An
// empty entry is an error; the entries themselves are checked by the
// dialer (a WithDialer function may accept any form). A single address
// parses to itself.
func parseAddrList(s string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		a := strings.TrimSpace(part)
		if a == "" {
			return nil, fmt.Errorf("server address list %q: empty entry", s)
		}
		out = append(out, a)
	}
	return out, nil
}

// checkAddr reports whether a is "host:port" with a port (an empty host
// is the local system, as for net.Dial).
func checkAddr(a string) error {
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("server address %q: %w", a, err)
	}
	if port == "" {
		return fmt.Errorf("server address %q: no port", a)
	}
	return nil
}

// addrKey is the form two addresses are compared in, as the official SDKs
// do without DNS (cluster-contract.md §4): the host lower-cased,
// "localhost" read as 127.0.0.1, IP literals in canonical form (IPv4-mapped
// IPv6 as IPv4), the port as a number. An address that is not host:port
// compares lower-cased as a whole.
func addrKey(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return strings.ToLower(a)
	}
	host = strings.ToLower(host)
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().WithZone(ip.Zone()).String()
	}
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		port = strconv.FormatUint(n, 10)
	}
	return net.JoinHostPort(host, port)
}

// sameAddr reports whether a and b name the same endpoint by addrKey.
func sameAddr(a, b string) bool { return addrKey(a) == addrKey(b) }

// uniqueAddrs returns the non-empty addresses of lists in order, each
// endpoint once (by addrKey).
func uniqueAddrs(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, a := range l {
			if k := addrKey(a); a != "" && !seen[k] {
				seen[k] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// reconnectCandidates lists the addresses a reconnect cycle rotates
// through: the leader a move named, the current address, the seeds, then
// the healthy roster of the last metadata read. Caller must hold c.mu.
func (c *Client) reconnectCandidates() []string {
	return uniqueAddrs([]string{c.next, c.addr}, c.seeds, c.roster)
}
