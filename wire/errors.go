package wire

import (
	"errors"
	"sort"
	"strconv"
)

//go:generate go run ./internal/errgen -in errors.yaml -out errors_gen.go

// Error is an IggyError: a numeric status code from the protocol's error
// space (errors.md) and its upstream name. Only the code travels on the wire.
//
// Two *Error values match under errors.Is when their codes are equal, so an
// error rebuilt from a reply (ErrorForCode) matches the package sentinel.
type Error struct {
	Code uint32
	Name string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return "iggy error " + strconv.FormatUint(uint64(e.Code), 10) + " (" + e.Name + ")"
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ServerSent reports whether the reference server sends this code to clients.
func (e *Error) ServerSent() bool { return serverSent(e.Code) }

// ErrorForCode returns the sentinel for code, or a fresh *Error named
// "Unknown" for a code outside the table. Code 0 (success) returns nil.
func ErrorForCode(code uint32) error {
	if code == 0 {
		return nil
	}
	if e := lookupError(code); e != nil {
		return e
	}
	return &Error{Code: code, Name: "Unknown"}
}

func lookupError(code uint32) *Error {
	i := sort.Search(len(errorTable), func(i int) bool { return errorTable[i].Code >= code })
	if i < len(errorTable) && errorTable[i].Code == code {
		return errorTable[i]
	}
	return nil
}

// KnownCode reports whether code is in the IggyError table.
func KnownCode(code uint32) bool { return lookupError(code) != nil }

// CodeOf extracts the IggyError code from err (0 for nil). An error that is
// not an *Error (after unwrapping) maps to ErrError's code, 1.
func CodeOf(err error) uint32 {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ErrError.Code
}
