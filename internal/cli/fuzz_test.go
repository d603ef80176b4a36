package cli

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/wire"
)

// FuzzParseArgs feeds arbitrary text to the argument parsers: none may
// panic, every failure is a usage error, and a header that parses
// survives encoding and decoding.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"42", "orders", "", "k=v", "n:u32=5", "b:raw=0xff", "7d", "1GiB", "2025-06-01T12:00:00Z", "15m", "x:bool=true", "é:f64=1e9"} {
		f.Add(s)
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, s string) {
		check := func(err error) {
			if err != nil && exitCode(err) != ExitUsage {
				t.Fatalf("%q: %v is not a usage error", s, err)
			}
		}
		id, err := parseID("x", s)
		check(err)
		if err == nil {
			if verr := id.Validate(); verr != nil {
				t.Fatalf("%q parsed to an invalid identifier: %v", s, verr)
			}
		}
		_, err = parseExpiry("x", s)
		check(err)
		_, err = parseSize("x", s, true)
		check(err)
		_, err = parseTimestamp(s, now)
		check(err)
		h, err := parseHeader(s)
		check(err)
		if err != nil {
			return
		}
		block := wire.UserHeaders{h}.AppendTo(nil)
		var got wire.UserHeaders
		if err := got.Decode(block); err != nil || len(got) != 1 || !cmp.Equal(got[0], h) {
			t.Fatalf("%q: header %+v did not survive encoding: %+v, %v", s, h, got, err)
		}
		if fmtHeaders(block) == "" || headersMap(block) == nil {
			t.Fatalf("%q: header %+v renders empty", s, h)
		}
	})
}
