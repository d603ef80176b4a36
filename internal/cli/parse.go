package cli

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// parseID turns a command-line argument into a wire identifier: all
// decimal digits (fitting a u32) is a numeric id, anything else a name.
// A resource whose name is all digits must therefore be addressed by its
// id.
func parseID(what, s string) (wire.Identifier, error) {
	if s == "" {
		return wire.Identifier{}, usagef("%s: empty name or id", what)
	}
	if isDigits(s) {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return wire.Identifier{}, usagef("%s %q: numeric id out of range (a numeric argument is an id)", what, s)
		}
		return wire.NumericID(uint32(n)), nil
	}
	id := wire.NamedID(s)
	if err := id.Validate(); err != nil {
		return wire.Identifier{}, usagef("%s %q: a name is 1..255 bytes of UTF-8", what, s)
	}
	return id, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseU32 parses a u32 argument.
func parseU32(what, s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, usagef("%s %q: want a number from 0 to %d", what, s, uint32(math.MaxUint32))
	}
	return uint32(n), nil
}

// parseU64 parses a u64 argument.
func parseU64(what, s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, usagef("%s %q: want a non-negative number", what, s)
	}
	return n, nil
}

// parseExpiry parses --message-expiry: "never"/"none"/"unlimited", or a
// duration such as "7d", "1h 30m", "90s" (humantime units as in the
// server configuration), returned in microseconds.
func parseExpiry(flag, s string) (uint64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "never", "none", "unlimited", "never_expire":
		return wire.ExpiryNever, nil
	case "default", "server_default", "0":
		return 0, nil
	}
	d, err := config.ParseDuration(s)
	if err != nil {
		if d2, err2 := time.ParseDuration(s); err2 == nil {
			d, err = d2, nil
		}
	}
	if err != nil || d < 0 {
		return 0, usagef("%s %q: want a duration such as 7d, 12h, 30m or never", flag, s)
	}
	if d > 0 && d < time.Microsecond {
		return 0, usagef("%s %q: shorter than a microsecond", flag, s)
	}
	return uint64(d / time.Microsecond), nil
}

// parseSize parses a byte size: "1GiB", "512 MiB", "2MB", 1048576; with
// allowUnlimited also "unlimited"/"none" (u64::MAX).
func parseSize(flag, s string, allowUnlimited bool) (uint64, error) {
	if allowUnlimited {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "unlimited", "none", "infinite":
			return wire.SizeUnlimited, nil
		}
	}
	n, err := config.ParseSize(s)
	if err != nil {
		return 0, usagef("%s %q: want a size such as 1GiB, 512MiB or 1000000", flag, s)
	}
	return n, nil
}

// parseTimestamp parses --timestamp: RFC 3339 ("2025-06-01T12:00:00Z"),
// microseconds since the Unix epoch, or a duration meaning that long ago
// ("15m", "2h", "1d").
func parseTimestamp(s string, now time.Time) (uint64, error) {
	if isDigits(s) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err == nil {
			return n, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return uint64(max(t.UnixMicro(), 0)), nil
	}
	if d, err := config.ParseDuration(strings.TrimPrefix(s, "-")); err == nil && d > 0 {
		return uint64(max(now.Add(-d).UnixMicro(), 0)), nil
	}
	return 0, usagef("--timestamp %q: want RFC 3339 (2025-06-01T12:00:00Z), microseconds since the epoch, or a duration ago (15m)", s)
}

// parseHeader parses one --header: KEY=VALUE (a String header) or
// KEY:KIND=VALUE with KIND one of string, bool, int8..int64,
// uint8..uint64, float32, float64, raw (hex).
func parseHeader(s string) (wire.UserHeader, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return wire.UserHeader{}, usagef("--header %q: want KEY=VALUE or KEY:KIND=VALUE", s)
	}
	kind := "string"
	if name, kd, ok := strings.Cut(k, ":"); ok {
		k, kind = name, strings.ToLower(kd)
	}
	if k == "" || len(k) > wire.MaxHeaderFieldLen {
		return wire.UserHeader{}, usagef("--header %q: the key is 1..255 bytes", s)
	}
	val, err := headerValue(kind, v)
	if err != nil {
		return wire.UserHeader{}, usagef("--header %q: %v", s, err)
	}
	if err := val.Validate(); err != nil {
		return wire.UserHeader{}, usagef("--header %q: the value is 1..255 bytes", s)
	}
	return wire.UserHeader{Key: wire.StringHeader(k), Value: val}, nil
}

type headerError string

func (e headerError) Error() string { return string(e) }

func headerValue(kind, v string) (wire.HeaderField, error) {
	bad := func(want string) (wire.HeaderField, error) {
		return wire.HeaderField{}, headerError("value " + strconv.Quote(v) + " is not " + want)
	}
	signed := func(bits int) (int64, bool) { n, err := strconv.ParseInt(v, 10, bits); return n, err == nil }
	unsigned := func(bits int) (uint64, bool) { n, err := strconv.ParseUint(v, 10, bits); return n, err == nil }
	switch kind {
	case "string", "str", "s":
		return wire.StringHeader(v), nil
	case "bool":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad("a bool")
		}
		return wire.BoolHeader(b), nil
	case "int8", "i8":
		if n, ok := signed(8); ok {
			return wire.Int8Header(int8(n)), nil
		}
		return bad("an int8")
	case "int16", "i16":
		if n, ok := signed(16); ok {
			return wire.Int16Header(int16(n)), nil
		}
		return bad("an int16")
	case "int32", "i32":
		if n, ok := signed(32); ok {
			return wire.Int32Header(int32(n)), nil
		}
		return bad("an int32")
	case "int64", "i64":
		if n, ok := signed(64); ok {
			return wire.Int64Header(n), nil
		}
		return bad("an int64")
	case "uint8", "u8":
		if n, ok := unsigned(8); ok {
			return wire.Uint8Header(uint8(n)), nil
		}
		return bad("a uint8")
	case "uint16", "u16":
		if n, ok := unsigned(16); ok {
			return wire.Uint16Header(uint16(n)), nil
		}
		return bad("a uint16")
	case "uint32", "u32":
		if n, ok := unsigned(32); ok {
			return wire.Uint32Header(uint32(n)), nil
		}
		return bad("a uint32")
	case "uint64", "u64":
		if n, ok := unsigned(64); ok {
			return wire.Uint64Header(n), nil
		}
		return bad("a uint64")
	case "float32", "f32":
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return bad("a float32")
		}
		return wire.Float32Header(float32(f)), nil
	case "float64", "f64":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad("a float64")
		}
		return wire.Float64Header(f), nil
	case "raw", "hex":
		b, err := hex.DecodeString(strings.TrimPrefix(v, "0x"))
		if err != nil {
			return bad("hex")
		}
		return wire.RawHeader(b), nil
	}
	return wire.HeaderField{}, headerError("unknown kind " + strconv.Quote(kind) + " (string, bool, int8..int64, uint8..uint64, float32, float64, raw)")
}

// exactArgs, maxArgs, rangeArgs and noArgs are cobra argument checks
// whose failures are usage errors naming the expected arguments.
func exactArgs(n int) cobra.PositionalArgs { return rangeArgs(n, n) }

func maxArgs(n int) cobra.PositionalArgs { return rangeArgs(0, n) }

var noArgs = rangeArgs(0, 0)

func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= lo && (hi < 0 || len(args) <= hi) {
			return nil
		}
		want := strconv.Itoa(lo)
		switch {
		case hi < 0:
			want = "at least " + want
		case hi != lo:
			want += " to " + strconv.Itoa(hi)
		}
		return usagef("%s: want %s argument(s), got %d (usage: %s)", cmd.CommandPath(), want, len(args), cmd.UseLine())
	}
}

// group returns a command that only holds subcommands: run without one it
// prints its help; with an unknown one it is a usage error.
func group(use, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:                        use,
		Short:                      short,
		Long:                       long,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				hint := ""
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					hint = "; did you mean " + strconv.Quote(s[0]) + "?"
				}
				return usagef("unknown command %q for %q%s (see '%s --help')", args[0], cmd.CommandPath(), hint, cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}
