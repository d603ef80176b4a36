package client

import (
	"slices"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// TestSeedSameAddr pins the address comparison of leader following: no
// DNS, lower-cased hosts, localhost as 127.0.0.1, IPs compared as IPs.
func TestSeedSameAddr(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"127.0.0.1:8090", "127.0.0.1:8090", true},
		{"LOCALHOST:8090", "127.0.0.1:8090", true},
		{"Node-1.Example:8090", "node-1.example:8090", true},
		{"[::ffff:10.0.0.1]:8090", "10.0.0.1:8090", true},
		{"[0:0::1]:1", "[::1]:1", true},
		{"10.0.0.1:08090", "10.0.0.1:8090", true},
		{"10.0.0.1:8090", "10.0.0.1:8091", false},
		{"10.0.0.1:8090", "10.0.0.2:8090", false},
		{"localhost:8090", "[::1]:8090", false},
		{"node-1:8090", "10.0.0.1:8090", false}, // no DNS
	} {
		if got := sameAddr(tc.a, tc.b); got != tc.same {
			t.Errorf("sameAddr(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
	if got := uniqueAddrs([]string{"", "a:1", "A:1"}, []string{"b:2", "a:01"}); !slices.Equal(got, []string{"a:1", "b:2"}) {
		t.Fatalf("uniqueAddrs = %v", got)
	}
}

// TestSeedAddrList: the comma-separated forms of Dial's addr and of a
// connection string.
func TestSeedAddrList(t *testing.T) {
	got, err := parseAddrList(" 10.0.0.1:8090 ,10.0.0.2:8090")
	if err != nil || !slices.Equal(got, []string{"10.0.0.1:8090", "10.0.0.2:8090"}) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := parseAddrList("pipe:0"); err != nil || !slices.Equal(got, []string{"pipe:0"}) {
		t.Fatalf("single address: %v %v", got, err)
	}
	for _, bad := range []string{"a:1,,b:2", "a:1,", ","} {
		if _, err := parseAddrList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}

	cs, err := ParseConnectionString("iggy://u:p%2C@10.0.0.1:8090,10.0.0.2:8091,[fd00::3]:8092?tls=true&tls_domain=iggy.example")
	if err != nil {
		t.Fatal(err)
	}
	if cs.Addr != "10.0.0.1:8090" || !slices.Equal(cs.Addrs, []string{"10.0.0.1:8090", "10.0.0.2:8091", "[fd00::3]:8092"}) ||
		cs.Username != "u" || cs.Password != "p," || cs.TLS == nil || cs.TLS.ServerName != "iggy.example" {
		t.Fatalf("%+v", cs)
	}
	cs, err = ParseConnectionString("iggy+ws://tok@h1:1,h2:2/")
	if err != nil || cs.Token != "tok" || !slices.Equal(cs.Addrs, []string{"h1:1", "h2:2"}) {
		t.Fatalf("%+v %v", cs, err)
	}
	cs, err = ParseConnectionString("iggy://u:p@h:1")
	if err != nil || !slices.Equal(cs.Addrs, []string{"h:1"}) {
		t.Fatalf("one address: %+v %v", cs, err)
	}
	for _, bad := range []string{"iggy://u:p@h:1,h2", "iggy://u:p@h:1,,h2:2", "iggy://u:p@h:1,h2:", "iggy://u:p@h:1,h2:2/x"} {
		if _, err := ParseConnectionString(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestSeedNodeAddr: the leader's address takes the port of the transport
// in use; a node without that transport has none.
func TestSeedNodeAddr(t *testing.T) {
	n := wire.ClusterNode{IP: "fd00::1", TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WebSocketPort: 8092}
	for scheme, want := range map[string]string{SchemeTCP: "[fd00::1]:8090", SchemeQUIC: "[fd00::1]:8080", SchemeWS: "[fd00::1]:8092"} {
		if got := nodeAddr(&n, scheme); got != want {
			t.Errorf("%s: %q, want %q", scheme, got, want)
		}
	}
	n.QUICPort = 0
	if got := nodeAddr(&n, SchemeQUIC); got != "" {
		t.Errorf("no QUIC port: %q", got)
	}
}
