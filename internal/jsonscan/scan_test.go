package jsonscan

import (
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func TestLitWS(t *testing.T) {
	for _, tc := range []struct {
		in      string
		compact bool
		ok      bool
		end     int
	}{
		{"{", false, true, 1},
		{" \t\r\n{", false, true, 5},
		{" {", true, false, 0},
		{"{", true, true, 1},
		{"", false, false, 0},
		{"  ", false, false, 2},
		{"x{", false, false, 0},
		{"\v{", false, false, 0},
	} {
		s := Scanner{B: []byte(tc.in), Compact: tc.compact}
		if ok := s.Lit('{'); ok != tc.ok || s.I != tc.end {
			t.Errorf("Lit(%q, compact %v) = %v at %d, want %v at %d", tc.in, tc.compact, ok, s.I, tc.ok, tc.end)
		}
	}
}

func TestPeek(t *testing.T) {
	s := Scanner{B: []byte(` "a"`)}
	if !s.Peek('"') || s.I != 1 {
		t.Fatalf("Peek = false or offset %d", s.I)
	}
	s = Scanner{B: []byte(` "a"`), Compact: true}
	if s.Peek('"') || s.I != 0 {
		t.Fatalf("compact Peek took whitespace")
	}
	s = Scanner{B: []byte(`1`)}
	if s.Peek('"') {
		t.Fatalf("Peek saw a string in a number")
	}
}

func TestStr(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`""`, "", true},
		{`"abc"`, "abc", true},
		{` "a b"`, "a b", true},
		{`"héllo"`, "héllo", true},
		{`"abc`, "", false},
		{`abc"`, "", false},
		{`"a\"b"`, "", false},
		{`"a\\"`, "", false},
		{`"a\nb"`, "", false},
		{"\"a\nb\"", "", false},
		{"\"a\x1fb\"", "", false},
		{"\"0123456789\x00abcdef\"", "", false},
		{"\"\x7f\"", "\x7f", true},
		{``, "", false},
	} {
		s := Scanner{B: []byte(tc.in)}
		v, ok := s.Str()
		if ok != tc.ok || (ok && string(v) != tc.want) {
			t.Errorf("Str(%q) = %q, %v; want %q, %v", tc.in, v, ok, tc.want, tc.ok)
		}
		if ok && s.I != len(tc.in) {
			t.Errorf("Str(%q) stopped at %d", tc.in, s.I)
		}
	}
}

func TestHasControl(t *testing.T) {
	for n := 0; n <= 17; n++ {
		for pos := -1; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = 0xff
				}
				if pos >= 0 {
					b[pos] = byte(c)
				}
				want := pos >= 0 && c < 0x20
				if got := HasControl(b); got != want {
					t.Fatalf("HasControl(%x) = %v", b, got)
				}
			}
		}
	}
}

func TestU128(t *testing.T) {
	const max = "340282366920938463463374607431768211455"
	for _, tc := range []struct {
		in   string
		want wire.Uint128
		ok   bool
	}{
		{"0", wire.Uint128{}, true},
		{" 7", wire.Uint128{Lo: 7}, true},
		{"18446744073709551615", wire.Uint128{Lo: ^uint64(0)}, true},
		{"18446744073709551616", wire.Uint128{Hi: 1}, true},
		{max, wire.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}, true},
		{"340282366920938463463374607431768211456", wire.Uint128{}, false},
		{"3402823669209384634633746074317682114550", wire.Uint128{}, false},
		{"", wire.Uint128{}, false},
		{"-1", wire.Uint128{}, false},
		{"01", wire.Uint128{}, false},
		{"1.5", wire.Uint128{}, false},
		{"1e3", wire.Uint128{}, false},
		{"1E3", wire.Uint128{}, false},
		{`"1"`, wire.Uint128{}, false},
	} {
		s := Scanner{B: []byte(tc.in)}
		v, ok := s.U128()
		if ok != tc.ok || (ok && v != tc.want) {
			t.Errorf("U128(%q) = %v, %v; want %v, %v", tc.in, v, ok, tc.want, tc.ok)
		}
	}
	s := Scanner{B: []byte("12,")}
	if v, ok := s.U128(); !ok || v.Lo != 12 || s.I != 2 {
		t.Errorf("U128 before a comma = %v, %v at %d", v, ok, s.I)
	}
}

func TestU64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{"18446744073709551615", ^uint64(0), true},
		{"18446744073709551616", 0, false},
		{"100000000000000000000", 0, false},
		{"00", 0, false},
		{"+1", 0, false},
		{"2.0", 0, false},
	} {
		s := Scanner{B: []byte(tc.in)}
		v, ok := s.U64()
		if ok != tc.ok || (ok && v != tc.want) {
			t.Errorf("U64(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.want, tc.ok)
		}
	}
}

func TestDecimalString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want wire.Uint128
		ok   bool
	}{
		{`"0"`, wire.Uint128{}, true},
		{`"007"`, wire.Uint128{Lo: 7}, true},
		{`"18446744073709551616"`, wire.Uint128{Hi: 1}, true},
		{`"340282366920938463463374607431768211455"`, wire.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}, true},
		{`"340282366920938463463374607431768211456"`, wire.Uint128{}, false},
		{`"0340282366920938463463374607431768211455"`, wire.Uint128{}, false},
		{`""`, wire.Uint128{}, false},
		{`"1a"`, wire.Uint128{}, false},
		{`"-1"`, wire.Uint128{}, false},
		{`"0x10"`, wire.Uint128{}, false},
		{`12`, wire.Uint128{}, false},
	} {
		s := Scanner{B: []byte(tc.in)}
		v, ok := s.DecimalString()
		if ok != tc.ok || (ok && v != tc.want) {
			t.Errorf("DecimalString(%s) = %v, %v; want %v, %v", tc.in, v, ok, tc.want, tc.ok)
		}
	}
}

func TestObjectArray(t *testing.T) {
	for _, tc := range []struct {
		in      string
		compact bool
		want    string
		ok      bool
	}{
		{`{}`, false, "", true},
		{`{"a":1,"b":[2,3],"c":[]}`, false, "a=1 b=2,3 c=", true},
		{` { "a" : 1 , "b" : [ 2 , 3 ] , "c" : [ ] } `, false, "a=1 b=2,3 c=", true},
		{`{ "a":1}`, true, "", false},
		{`{"a":1,"b":[2,3],"c":[]}`, true, "a=1 b=2,3 c=", true},
		{`{"a":1,}`, false, "", false},
		{`{"a" 1}`, false, "", false},
		{`{"a":1`, false, "", false},
		{`{"b":[2,]}`, false, "", false},
		{`{"b":[2 3]}`, false, "", false},
		{`{"c":[1]}`, false, "", false},
		{`{"x":1}`, false, "", false},
		{`{a:1}`, false, "", false},
		{`[]`, false, "", false},
	} {
		s := Scanner{B: []byte(tc.in), Compact: tc.compact}
		var got []byte
		ok := s.Object(func(key []byte) bool {
			if len(got) > 0 {
				got = append(got, ' ')
			}
			got = append(append(got, key...), '=')
			switch string(key) {
			case "a":
				n, ok := s.U64()
				got = append(got, byte('0'+n))
				return ok
			case "b":
				first := true
				return s.Array(func() bool {
					if !first {
						got = append(got, ',')
					}
					first = false
					n, ok := s.U64()
					got = append(got, byte('0'+n))
					return ok
				})
			case "c":
				return s.EmptyArray()
			}
			return false
		})
		if ok != tc.ok || (ok && string(got) != tc.want) {
			t.Errorf("Object(%q, compact %v) = %q, %v; want %q, %v", tc.in, tc.compact, got, ok, tc.want, tc.ok)
		}
	}
}
