package client

import (
	"strings"
	"testing"
	"time"
)

func TestParseConnectionString(t *testing.T) {
	cs, err := ParseConnectionString("iggy+ws://admin:p%40ss@10.0.0.1:8092?tls=true&tls_domain=example.com&heartbeat_interval=3s&reconnection_retries=4")
	if err != nil {
		t.Fatal(err)
	}
	if cs.Transport != SchemeWS || cs.Addr != "10.0.0.1:8092" || cs.Username != "admin" || cs.Password != "p@ss" ||
		cs.TLS == nil || cs.TLS.ServerName != "example.com" || !cs.TLS.InsecureSkipVerify || cs.Heartbeat != 3*time.Second || cs.Reconnect.MaxAttempts != 4 {
		t.Fatalf("%+v", cs)
	}
	cs, err = ParseConnectionString("iggy://tok123@127.0.0.1:8090")
	if err != nil || cs.Transport != SchemeTCP || cs.Token != "tok123" || cs.TLS != nil {
		t.Fatalf("%+v %v", cs, err)
	}
	cs, err = ParseConnectionString("iggy+tcp://u:p@h:1?tls=true")
	if err != nil || cs.TLS == nil || cs.TLS.InsecureSkipVerify {
		t.Fatalf("tcp tls must verify by default: %+v %v", cs, err)
	}
	cs, err = ParseConnectionString("iggy+quic://u:p@h:8080?validate_certificate=true&keep_alive_interval=5000")
	if err != nil || cs.Transport != SchemeQUIC || cs.TLS == nil || cs.TLS.InsecureSkipVerify || cs.TLS.ServerName != "localhost" {
		t.Fatalf("%+v %v", cs, err)
	}
	for _, bad := range []string{
		"iggy+quic://u:p@h:8080?tls=true", // not a QUIC key
		"iggy://u:p@h:1?bogus=1",
		"iggy+wss://u:p@h:1",
		"iggy+http://u:p@h:1",
		"iggy://u:p@h",
		"iggy://u:p@h:1/path",
		"iggy://u:p@h:1?tls=maybe",
		"iggy://u:p@h:1?heartbeat_interval=soon",
	} {
		if _, err := ParseConnectionString(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if !IsConnectionString("iggy+ws://x:1") || IsConnectionString("127.0.0.1:8090") {
		t.Fatal("IsConnectionString")
	}
	if _, err := Dial(t.Context(), "iggy+quic://u:p@127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "WithTransport") {
		t.Fatalf("QUIC string without a transport: %v", err)
	}
}
