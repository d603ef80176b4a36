package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Conformance checks for system, user, PAT, client and login vectors.
var (
	systemRequestVectors = map[string]func(*testing.T, requestVector){
		"login_register": func(t *testing.T, v requestVector) {
			var in struct {
				Password, Username, SDKName, SDKVersion string
				ProtocolVersion                         uint32 `json:"protocol_version"`
			}
			unmarshalInputs(t, v.Inputs, &in, map[string]*string{"password": &in.Password, "username": &in.Username, "sdk_name": &in.SDKName, "sdk_version": &in.SDKVersion})
			want := LoginRegister{Version: ClientVersionInfo{ProtocolVersion: in.ProtocolVersion, SDKName: in.SDKName, SDKVersion: in.SDKVersion}, Username: in.Username, Password: in.Password}
			checkBody(t, v.Body, &want, &LoginRegister{})
		},
		"login_register_with_pat": func(t *testing.T, v requestVector) {
			var in struct {
				Token, SDKName, SDKVersion string
				ProtocolVersion            uint32 `json:"protocol_version"`
			}
			unmarshalInputs(t, v.Inputs, &in, map[string]*string{"token": &in.Token, "sdk_name": &in.SDKName, "sdk_version": &in.SDKVersion})
			want := LoginRegisterWithPAT{Version: ClientVersionInfo{ProtocolVersion: in.ProtocolVersion, SDKName: in.SDKName, SDKVersion: in.SDKVersion}, Token: in.Token}
			checkBody(t, v.Body, &want, &LoginRegisterWithPAT{})
		},
	}
	systemReplyVectors = map[string]func(*testing.T, replyVector){
		"login_register_ok": func(t *testing.T, v replyVector) {
			var sdk struct {
				UserID                uint32
				Session               uint64
				ServerProtocolVersion uint32
				ServerVersion         string
			}
			if err := json.Unmarshal(v.SDKDecoded, &sdk); err != nil {
				t.Fatal(err)
			}
			want := LoginRegisterReply(sdk)
			checkBody(t, v.Payload, &want, &LoginRegisterReply{})
		},
	}
)

// unmarshalInputs decodes a vector's inputs into dst and then copies the
// named string fields (snake_case keys) into the given pointers.
func unmarshalInputs(t *testing.T, raw json.RawMessage, dst any, strs map[string]*string) {
	t.Helper()
	if err := json.Unmarshal(raw, dst); err != nil {
		t.Fatalf("inputs: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("inputs: %v", err)
	}
	for k, p := range strs {
		s, ok := m[k].(string)
		if !ok {
			t.Fatalf("inputs: %q missing or not a string", k)
		}
		*p = s
	}
}

// checkBody asserts that want encodes to exactly wire, that wire decodes
// into a value equal to want, and that re-encoding the decoded value gives
// wire again. fresh must be a zero value of want's type.
func checkBody[B Body](t *testing.T, wire []byte, want, fresh B) {
	t.Helper()
	if got := want.AppendTo(nil); !bytes.Equal(got, wire) {
		t.Errorf("encode:\n got %x\nwant %x", got, wire)
	}
	if err := fresh.Decode(wire); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if d := cmpDiff(want, fresh); d != "" {
		t.Errorf("decode mismatch (-want +got):\n%s", d)
	}
	if got := fresh.AppendTo(nil); !bytes.Equal(got, wire) {
		t.Errorf("re-encode:\n got %x\nwant %x", got, wire)
	}
}
