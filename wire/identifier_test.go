package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestIdentifier(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   Identifier
		wire string
	}{
		{"numeric 1", NumericID(1), "\x01\x04\x01\x00\x00\x00"},
		{"numeric 0", NumericID(0), "\x01\x04\x00\x00\x00\x00"},
		{"named", NamedID("orders"), "\x02\x06orders"},
		{"longest name", NamedID(strings.Repeat("n", 255)), "\x02\xff" + strings.Repeat("n", 255)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.id.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := tc.id.AppendTo(nil)
			if string(got) != tc.wire || tc.id.EncodedLen() != len(got) {
				t.Fatalf("encode = %x (len %d)", got, tc.id.EncodedLen())
			}
			var d Identifier
			if err := d.Decode(got); err != nil || d != tc.id {
				t.Errorf("decode = %+v, %v", d, err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		wire []byte
	}{
		{"empty", nil},
		{"kind only", []byte{1}},
		{"numeric len 3", []byte{1, 3, 1, 0, 0}},
		{"numeric len 8", []byte{1, 8, 1, 0, 0, 0, 0, 0, 0, 0}},
		{"numeric short", []byte{1, 4, 1, 0}},
		{"empty string", []byte{2, 0}},
		{"bad utf8", []byte{2, 2, 0xc3, 0x28}},
		{"kind 0", []byte{0, 4, 1, 0, 0, 0}},
		{"kind 3", []byte{3, 1, 'a'}},
		{"trailing", []byte{2, 1, 'a', 'b'}},
		{"string short", []byte{2, 5, 'a'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Identifier
			if err := d.Decode(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode(%x) = %v, want InvalidCommand", tc.wire, err)
			}
		})
	}
	for _, bad := range []Identifier{{}, {Kind: 9}, NamedID(""), NamedID(strings.Repeat("x", 256)), NamedID("\xff")} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidIdentifier) {
			t.Errorf("Validate(%+v) = %v", bad, err)
		}
	}
}

func TestLoginBodies(t *testing.T) {
	v := ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "go-sdk", SDKVersion: "0.11.0"}
	pw := LoginRegister{Version: v, Username: "iggy", Password: "", Context: []byte("ctx")}
	pat := LoginRegisterWithPAT{Version: v, Token: "tok", Context: nil}
	reply := LoginRegisterReply{UserID: 3, Session: 9, ServerProtocolVersion: ProtocolVersion, ServerVersion: "0.1.0"}
	checkBody(t, pw.AppendTo(nil), &pw, &LoginRegister{})
	checkBody(t, pat.AppendTo(nil), &pat, &LoginRegisterWithPAT{})
	checkBody(t, reply.AppendTo(nil), &reply, &LoginRegisterReply{})

	gotV, rest, err := DecodeClientVersionInfo(pw.AppendTo(nil))
	if err != nil || gotV != v {
		t.Fatalf("version prefix = %+v, %v", gotV, err)
	}
	var cred LoginRegister
	if err := cred.DecodeCredentials(append(bytes.Clone(rest), 0xAA)); err != nil || cred.Username != "iggy" {
		t.Errorf("credentials with trailing byte = %+v, %v", cred, err)
	}
	// commands.md §40: the reference does not check bytes after the
	// context, so whole-body decoding ignores them too.
	var p LoginRegisterWithPAT
	if err := p.Decode(append(pat.AppendTo(nil), 0)); err != nil || p.Token != "tok" {
		t.Errorf("whole-body decode with a trailing byte = %+v, %v", p, err)
	}

	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"empty", nil},
		{"no sdk name", []byte{0, 0x2c, 0, 0, 0}},
		{"sdk name cut", []byte{0, 0x2c, 0, 0, 5, 'g'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := DecodeClientVersionInfo(tc.body); err == nil {
				t.Errorf("accepted %x", tc.body)
			}
		})
	}
	huge := appendU32(appendShortString(appendName(v.appendTo(nil), "iggy"), "pw"), MaxLoginContextBytes+1)
	if err := new(LoginRegister).Decode(huge); err == nil {
		t.Error("accepted a context over the limit")
	}
	zero := LoginRegisterReply{ServerVersion: "x"}
	if err := new(LoginRegisterReply).Decode(zero.AppendTo(nil)); err == nil {
		t.Error("accepted session 0")
	}
	if err := (Empty{}).Decode([]byte{0}); err == nil {
		t.Error("Empty accepted a byte")
	}
}
