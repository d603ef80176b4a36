package wire

import (
	"bytes"
	"strings"
	"testing"
)

var sampleClients = map[string]Client{
	"unauthenticated": {ClientID: 1, Transport: TransportTCP, Address: "127.0.0.1:52000"},
	"quic in groups":  {ClientID: 2, UserID: 3, Transport: TransportQUIC, Address: "[::1]:8080", ConsumerGroupsCount: 4},
	"websocket":       {ClientID: 3, UserID: 1, Transport: TransportWebSocket, Address: "10.1.2.3:8092"},
	"raw transport":   {ClientID: 4, Transport: 9},
	"max address":     {ClientID: 5, Transport: TransportTCP, Address: strings.Repeat("a", MaxClientAddressLen)},
}

func TestClientRoundTrip(t *testing.T) {
	for name, c := range sampleClients {
		t.Run(name, func(t *testing.T) {
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			enc := sysRoundTrip(t, &c, &Client{})
			if len(enc) != 17+len(c.Address) {
				t.Errorf("encoded %d bytes, commands.md says 17+A = %d", len(enc), 17+len(c.Address))
			}
		})
	}
}

func TestClientDecodeErrors(t *testing.T) {
	dec := (&Client{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "address beyond body", body: sysHex("01000000 00000000 01 05000000 6162 00000000"), dec: dec},
		{name: "address over limit", body: sysHex("01000000 00000000 01 01100000"), dec: dec},
		{name: "address not utf8", body: sysHex("01000000 00000000 01 01000000 ff 00000000"), dec: dec},
		{name: "missing group count", body: sysHex("01000000 00000000 01 00000000"), dec: dec},
		{name: "trailing byte", body: sysHex("01000000 00000000 01 00000000 00000000 00"), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "long address", validate: (&Client{Address: strings.Repeat("a", MaxClientAddressLen+1)}).Validate, want: ErrInvalidCommand},
		{name: "address not utf8", validate: (&Client{Address: "\xff"}).Validate, want: ErrInvalidCommand},
	})
}

var sampleClientDetails = map[string]ClientDetails{
	"no groups": {ClientID: 7, UserID: 1, Transport: TransportTCP, Address: "127.0.0.1:1"},
	"groups": {ClientID: 42, UserID: 1, Transport: TransportTCP, Address: "127.0.0.1:52000", ConsumerGroups: []ClientConsumerGroup{
		{StreamID: 1, TopicID: 2, GroupID: 0}, {StreamID: 3, TopicID: 0, GroupID: 9},
	}},
}

func TestClientDetailsRoundTrip(t *testing.T) {
	for name, d := range sampleClientDetails {
		t.Run(name, func(t *testing.T) {
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			enc := sysRoundTrip(t, &d, &ClientDetails{})
			h := d.Header()
			if int(h.ConsumerGroupsCount) != len(d.ConsumerGroups) {
				t.Errorf("header count %d", h.ConsumerGroupsCount)
			}
			head := h.AppendTo(nil)
			if !bytes.HasPrefix(enc, head) || len(enc) != len(head)+clientGroupLen*len(d.ConsumerGroups) {
				t.Errorf("layout %x", enc)
			}
		})
	}
}

func TestClientDetailsLayout(t *testing.T) {
	d := sampleClientDetails["groups"]
	want := sysHex("2a000000 01000000 01 0f000000 3132372e302e302e313a3532303030 02000000 01000000 02000000 00000000 03000000 00000000 09000000")
	checkBody(t, want, &d, &ClientDetails{})
}

func TestClientNotFound(t *testing.T) {
	d := sampleClientDetails["no groups"]
	if !ClientNotFound(nil) || ClientNotFound(d.AppendTo(nil)) {
		t.Error("ClientNotFound does not tell an empty payload from ClientDetails")
	}
	if err := (&ClientDetails{}).Decode(nil); err == nil {
		t.Error("ClientDetails decoded from an empty payload")
	}
}

func TestClientDetailsDecodeErrors(t *testing.T) {
	dec := (&ClientDetails{}).Decode
	head := func(count string) []byte { return sysHex("01000000 00000000 01 00000000" + count) }
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "count without entries", body: head("01000000"), dec: dec},
		{name: "count beyond body", body: head("ffffffff"), dec: dec},
		{name: "partial entry", body: append(head("01000000"), make([]byte, 11)...), dec: dec},
		{name: "extra entry", body: append(head("01000000"), make([]byte, 24)...), dec: dec},
		{name: "trailing byte", body: append(head("00000000"), 0), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "long address", validate: (&ClientDetails{Address: strings.Repeat("a", MaxClientAddressLen+1)}).Validate, want: ErrInvalidCommand},
	})
}

var sampleClientLists = map[string]Clients{
	"none": nil,
	"one":  {sampleClients["unauthenticated"]},
	"all":  {sampleClients["unauthenticated"], sampleClients["quic in groups"], sampleClients["raw transport"]},
}

func TestClientsRoundTrip(t *testing.T) {
	for name, cs := range sampleClientLists {
		t.Run(name, func(t *testing.T) {
			sysRoundTrip(t, &cs, &Clients{})
		})
	}
}

func TestClientsDecodeErrors(t *testing.T) {
	one := sampleClientLists["one"]
	enc := one.AppendTo(nil)
	dec := (&Clients{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "partial", body: enc[:len(enc)-1], dec: dec},
		{name: "second partial", body: append(bytes.Clone(enc), enc[:9]...), dec: dec},
	})
}

func TestGetClientRoundTrip(t *testing.T) {
	for _, id := range []uint32{0, 42, 1<<32 - 1} {
		g := GetClient{ClientID: id}
		if enc := sysRoundTrip(t, &g, &GetClient{}); len(enc) != 4 {
			t.Errorf("GET_CLIENT body is %d bytes", len(enc))
		}
	}
	dec := (&GetClient{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "short", body: sysHex("2a0000"), dec: dec},
	})
	// A request body: bytes after the client id are ignored.
	var g GetClient
	if err := g.Decode(sysHex("2a00000000")); err != nil || g.ClientID != 42 {
		t.Errorf("GET_CLIENT with a trailing byte = %+v, %v", g, err)
	}
}

func TestTransportString(t *testing.T) {
	for tr, want := range map[Transport]string{TransportTCP: "tcp", TransportQUIC: "quic", TransportWebSocket: "websocket", 3: "unknown"} {
		if got := tr.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", tr, got, want)
		}
	}
}
