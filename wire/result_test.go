package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestResultSection(t *testing.T) {
	payload := []byte{1, 2, 3}
	ok := append(AppendResultOK(nil), payload...)
	for _, tc := range []struct {
		name    string
		body    []byte
		payload []byte
		err     error
	}{
		{"success with payload", ok, payload, nil},
		{"success empty", AppendResultOK(nil), []byte{}, nil},
		{"rejection", AppendResultError(nil, 1012), nil, ErrStreamNameAlreadyExists},
		{"transient", AppendResultError(nil, 57), nil, ErrTransientNotCommitted},
		{"zero result entry is success", []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, []byte{9}, nil},
		{"empty body", nil, nil, ErrInvalidCommand},
		{"short count", []byte{0, 0}, nil, ErrInvalidCommand},
		{"count past body", []byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, nil, ErrInvalidCommand},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff}, nil, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitResult(tc.body)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err == nil && !bytes.Equal(got, tc.payload) {
				t.Errorf("payload = %x, want %x", got, tc.payload)
			}
		})
	}
	entries, rest, err := DecodeResult(nil, AppendResultError(nil, 41))
	if err != nil || len(entries) != 1 || entries[0] != (ResultEntry{0, 41}) || len(rest) != 0 {
		t.Errorf("DecodeResult = %+v %x %v", entries, rest, err)
	}
}

func TestVersionWindow(t *testing.T) {
	if ProtocolVersion != 11264 || ProtocolVersionMin != 11264 {
		t.Fatalf("packed version %d/%d, want 11264", ProtocolVersion, ProtocolVersionMin)
	}
	for _, tc := range []struct {
		name string
		v    uint32
		ok   bool
	}{
		{"0.11.0", PackVersion(0, 11, 0), true},
		{"0.11.1023", PackVersion(0, 11, 1023), true},
		{"0.10.9", PackVersion(0, 10, 9), false},
		{"0.12.0", PackVersion(0, 12, 0), false},
		{"1.11.0", PackVersion(1, 11, 0), false},
		{"zero", 0, false},
		{"high bits", ProtocolVersion | 1<<30, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VersionAccepted(tc.v, ProtocolVersionMin, ProtocolVersion); got != tc.ok {
				t.Errorf("VersionAccepted(%s) = %v", FormatVersion(tc.v), got)
			}
		})
	}
	if FormatVersion(ProtocolVersion) != ProtocolVersionString {
		t.Errorf("FormatVersion = %s", FormatVersion(ProtocolVersion))
	}
	if a, b, c := UnpackVersion(PackVersion(3, 4, 5)); a != 3 || b != 4 || c != 5 {
		t.Errorf("unpack = %d.%d.%d", a, b, c)
	}
}
