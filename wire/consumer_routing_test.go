package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestConsumerRoutingCommands: the four routing codes of the 0.11.0 SDKs
// are known, travel as NonReplicated reads, and stay out of Commands
// (commands.md's list).
func TestConsumerRoutingCommands(t *testing.T) {
	for code, name := range map[Command]string{
		14: "ATTACH_CONSUMER_SESSION", 103: "GET_POLL_ROUTING",
		104: "POLL_MESSAGES_ON_PRIMARY", 123: "GET_CONSUMER_OFFSET_ROUTING",
	} {
		c, ok := LookupCommand(code)
		if !ok || c.Name != name || c.Operation != OpNonReplicated || c.Plane != PlaneRead || c.Replicated() {
			t.Errorf("LookupCommand(%d) = %+v, %v", code, c, ok)
		}
		for _, listed := range Commands() {
			if listed.Code == code {
				t.Errorf("Commands lists %d", code)
			}
		}
	}
}

// TestPollRoutingLayout pins the bytes of the SDK's layout
// (iggy_binary_protocol 0.11.0, PollRoutingResponse: the attach body, then
// a ClusterNodeResponse) and rejects truncation and trailing bytes.
func TestPollRoutingLayout(t *testing.T) {
	p := PollRouting{
		Session: AttachConsumerSession{Client: Uint128{Lo: 0x0102, Hi: 0x0a}, Session: 7, MetadataWatermark: 11},
		Primary: ClusterNode{Name: "node-1", IP: "::1", TCPPort: 8090, QUICPort: 8091, WebSocketPort: 3000, Role: ClusterFollower, Status: ClusterNodeHealthy},
	}
	b := p.AppendTo(nil)
	want := "0201000000000000" + "0a00000000000000" + "0700000000000000" + "0b00000000000000" +
		"06000000" + hex.EncodeToString([]byte("node-1")) + "03000000" + hex.EncodeToString([]byte("::1")) +
		"9a1f" + "9b1f" + "0000" + "b80b" + "01" + "00"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("layout\n got %s\nwant %s", got, want)
	}
	var d PollRouting
	if err := d.Decode(b); err != nil || d != p {
		t.Fatalf("round trip: %+v, %v", d, err)
	}
	for n := range len(b) {
		if d.Decode(b[:n]) == nil {
			t.Fatalf("accepted a truncation to %d bytes", n)
		}
	}
	if d.Decode(append(bytes.Clone(b), 0)) == nil {
		t.Fatal("accepted a trailing byte")
	}
	var a AttachConsumerSession
	if err := a.Decode(append(p.Session.AppendTo(nil), 1, 2)); err != nil || a != p.Session {
		t.Fatalf("attach body with trailing bytes (ignored, as in every request): %+v, %v", a, err)
	}
	if a.Decode(make([]byte, AttachConsumerSessionSize-1)) == nil {
		t.Fatal("accepted a short attach body")
	}
}
