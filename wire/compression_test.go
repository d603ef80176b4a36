package wire

import (
	"errors"
	"testing"
)

func TestCompressionAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		code  CompressionAlgorithm
		name  string
		valid bool
	}{
		{0, "unknown(0)", false},
		{CompressionNone, "none", true},
		{CompressionGzip, "gzip", true},
		{3, "unknown(3)", false},
		{255, "unknown(255)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.code.String(); got != tc.name {
				t.Errorf("String = %q", got)
			}
			if tc.code.Valid() != tc.valid {
				t.Errorf("Valid = %v", tc.code.Valid())
			}
			if !tc.valid {
				return
			}
			if got, err := ParseCompressionAlgorithm(tc.name); err != nil || got != tc.code {
				t.Errorf("Parse(String()) = %v, %v", got, err)
			}
		})
	}
}

func TestParseCompressionAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CompressionAlgorithm
		err  error
	}{
		{"none", CompressionNone, nil},
		{"gzip", CompressionGzip, nil},
		{"GZip", CompressionGzip, nil},
		{"NONE", CompressionNone, nil},
		{"", 0, ErrInvalidOptionValue},
		{"gzip ", 0, ErrInvalidOptionValue},
		{"zstd", 0, ErrInvalidOptionValue},
		{"1", 0, ErrInvalidOptionValue},
		{"gzi", 0, ErrInvalidOptionValue},
		{"gzipp", 0, ErrInvalidOptionValue},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCompressionAlgorithm(tc.in)
			if got != tc.want || !sameErr(err, tc.err) {
				t.Errorf("got %v, %v; want %v, %v", got, err, tc.want, tc.err)
			}
			if err != nil && !errors.Is(err, ErrInvalidOptionValue) {
				t.Errorf("error %v is not 4042", err)
			}
		})
	}
}
