package httpapi

import (
	hexpkg "encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/iggo-dev/iggo/wire"
)

// sizeUnits are the "recoverable unit" candidates of http-api.md §5,
// largest first.
var sizeUnits = []struct {
	name string
	n    uint64
}{
	{"EiB", 1 << 60}, {"EB", 1e18}, {"PiB", 1 << 50}, {"PB", 1e15}, {"TiB", 1 << 40}, {"TB", 1e12},
	{"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3},
}

// formatSize renders a byte count as the reference's size strings: the
// first unit (largest first) not above n in which n has at most three
// decimals, trailing zeros dropped ("1 KiB", "1.234 KB", "3136.5 KiB");
// none fits: "<n> B".
func formatSize(n uint64) string {
	v := new(big.Int).SetUint64(n)
	thousand := big.NewInt(1000)
	for _, u := range sizeUnits {
		if u.n > n {
			continue
		}
		un := new(big.Int).SetUint64(u.n)
		q, rem := new(big.Int).QuoRem(v, un, new(big.Int))
		milli := new(big.Int).Mul(rem, thousand)
		frac, fracRem := new(big.Int).QuoRem(milli, un, new(big.Int))
		if fracRem.Sign() != 0 {
			continue
		}
		s := q.String()
		if f := frac.Int64(); f != 0 {
			d := strings.TrimRight(strconv.FormatInt(f+1000, 10)[1:], "0")
			s += "." + d
		}
		return s + " " + u.name
	}
	return strconv.FormatUint(n, 10) + " B"
}

// Size is a byte count in a reply, rendered as a size string.
type Size uint64

// MarshalJSON implements json.Marshaler.
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(formatSize(uint64(s))) }

// U128 is a message id: written as a bare JSON integer that may exceed
// 2^64; read from a number or a string holding a decimal u128 or 32 hex
// digits with optional dashes (http-api.md §5; numbers above u64 are an
// Iggo leniency).
type U128 wire.Uint128

func (u U128) big() *big.Int {
	v := new(big.Int).SetUint64(u.Hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(u.Lo))
}

// MarshalJSON implements json.Marshaler.
func (u U128) MarshalJSON() ([]byte, error) {
	if u.Hi == 0 {
		return strconv.AppendUint(nil, u.Lo, 10), nil
	}
	return []byte(u.big().String()), nil
}

var errBadID = errors.New("message id must be a number, a decimal u128 string or 32 hex digits")

// UnmarshalJSON implements json.Unmarshaler.
func (u *U128) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*u = U128{}
		return nil
	}
	if len(s) > 0 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return errBadID
		}
		return u.parseString(str, true)
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		*u = U128{Lo: n}
		return nil
	}
	// A bare integer above u64 (what MarshalJSON writes) is accepted too,
	// so Go clients can read replies back; the reference takes only u64
	// numbers.
	return u.parseString(s, false)
}

// parseString reads a decimal u128, or (hex) 32 hex digits with optional
// dashes. A string of 32 decimal digits is read as decimal (Iggo choice
// for the ambiguous case); hex needs a letter a-f or a dash.
func (u *U128) parseString(s string, hex bool) error {
	if h := strings.ReplaceAll(s, "-", ""); hex && len(h) == 32 && strings.ContainsAny(strings.ToLower(s), "abcdef-") {
		if raw, err := hexpkg.DecodeString(h); err == nil {
			*u = U128{Hi: beU64(raw[:8]), Lo: beU64(raw[8:])}
			return nil
		}
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return errBadID
	}
	lo := new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0)))
	*u = U128{Lo: lo.Uint64(), Hi: new(big.Int).Rsh(v, 64).Uint64()}
	return nil
}

func beU64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
