package wire

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorTable(t *testing.T) {
	if len(errorTable) != 237 {
		t.Errorf("error table has %d codes, errors.md lists 237", len(errorTable))
	}
	for i := 1; i < len(errorTable); i++ {
		if errorTable[i-1].Code >= errorTable[i].Code {
			t.Fatalf("table not strictly ascending at %d", errorTable[i].Code)
		}
	}
	for _, e := range errorTable {
		if got := ErrorForCode(e.Code); got != e {
			t.Errorf("ErrorForCode(%d) = %v", e.Code, got)
		}
	}
}

func TestErrorMatching(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		match error
		code  uint32
		is    bool
	}{
		{"same sentinel", ErrStreamIDNotFound, ErrStreamIDNotFound, 1009, true},
		{"rebuilt from code", &Error{Code: 1009, Name: "x"}, ErrStreamIDNotFound, 1009, true},
		{"wrapped", fmt.Errorf("get stream: %w", ErrTopicIDNotFound), ErrTopicIDNotFound, 2010, true},
		{"other code", ErrStreamIDNotFound, ErrTopicIDNotFound, 1009, false},
		{"unknown code", ErrorForCode(65000), ErrInvalidCommand, 65000, false},
		{"plain error", errors.New("boom"), ErrError, 1, false},
		{"eviction", (&EvictionHeader{Reason: EvictStaleClient}).Err(), ErrStaleClient, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errors.Is(tc.err, tc.match); got != tc.is {
				t.Errorf("errors.Is = %v, want %v", got, tc.is)
			}
			if _, ok := tc.err.(*EvictionError); !ok {
				if got := CodeOf(tc.err); got != tc.code {
					t.Errorf("CodeOf = %d, want %d", got, tc.code)
				}
			}
		})
	}
	if ErrorForCode(0) != nil || CodeOf(nil) != 0 {
		t.Error("code 0 must be success")
	}
	if !ErrInvalidCommand.ServerSent() || ErrError.ServerSent() {
		t.Error("server-sent flags disagree with errors.yaml")
	}
}

func TestEvictionMapping(t *testing.T) {
	want := map[EvictionReason]error{
		EvictNoSession: ErrUnauthenticated, EvictClientReleaseTooLow: ErrInvalidCommand,
		EvictClientReleaseTooHigh: ErrInvalidCommand, EvictInvalidRequestOperation: ErrInvalidCommand,
		EvictInvalidRequestBody: ErrInvalidCommand, EvictInvalidRequestBodySize: ErrInvalidCommand,
		EvictSessionTooLow: ErrUnauthenticated, EvictSessionReleaseMismatch: ErrUnauthenticated,
		EvictInvalidCredentials: ErrInvalidCredentials, EvictInvalidToken: ErrInvalidPersonalAccessToken,
		EvictUserInactive: ErrUnauthenticated, EvictSessionError: ErrUnauthenticated,
		EvictStaleClient: ErrStaleClient, EvictMalformedLogin: ErrInvalidFormat, 200: ErrInvalidCommand,
	}
	for r, w := range want {
		if err := (&EvictionError{Reason: r}); !errors.Is(err, w) {
			t.Errorf("reason %v maps to %v, want %v", r, err.Unwrap(), w)
		}
	}
	ok := &EvictionError{Reason: EvictIncompatibleProtocol, ServerProtocolVersion: ProtocolVersion, ServerProtocolVersionMin: ProtocolVersionMin}
	if !errors.Is(ok, ErrIncompatibleProtocolVersion) {
		t.Errorf("reason 14 with a window maps to %v", ok.Unwrap())
	}
	bad := &EvictionError{Reason: EvictIncompatibleProtocol}
	if !errors.Is(bad, ErrUnauthenticated) {
		t.Errorf("reason 14 without a window maps to %v", bad.Unwrap())
	}
	if EvictMalformedLogin.String() != "MalformedLogin" || EvictionReason(99).String() != "EvictionReason(99)" {
		t.Error("reason names")
	}
}
