package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Duration is a time.Duration read from humantime-style text as the
// reference configuration writes it: "30 s", "1 m", "7 days", "500ms",
// "1h 30m" (config.md §1). A bare "0" is zero.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String renders d in Go duration syntax, which ParseDuration also reads.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// maxDurationText bounds the text ParseDuration looks at; longer input is
// rejected before any work.
const maxDurationText = 128

var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nsec": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "usec": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond, "millis": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

var errBadDuration = errors.New("invalid duration (want e.g. \"30 s\", \"1 m\", \"7 days\")")

// ParseDuration reads a sequence of <integer><unit> terms, spaces allowed
// between and inside terms, and returns their sum. Units: ns, us/µs, ms,
// s, m, h, d, w and their long forms. "0" alone means zero.
func ParseDuration(s string) (time.Duration, error) {
	if len(s) > maxDurationText {
		return 0, errBadDuration
	}
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, errBadDuration
	}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, errBadDuration
		}
		n, err := strconv.ParseUint(s[:i], 10, 63)
		if err != nil {
			return 0, errBadDuration
		}
		s = strings.TrimLeft(s[i:], " ")
		j := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
		if j < 0 {
			j = len(s)
		}
		unit, ok := durationUnits[strings.ToLower(s[:j])]
		if !ok {
			return 0, errBadDuration
		}
		if n > uint64(math.MaxInt64/int64(unit)) {
			return 0, errBadDuration
		}
		term := time.Duration(n) * unit
		if total > math.MaxInt64-term {
			return 0, errBadDuration
		}
		total += term
		s = strings.TrimLeft(s[j:], " ")
	}
	return total, nil
}

// Size is a byte count read from "64 MiB", "2 MB", "1.5 GiB" or a raw
// number (config.md §1).
type Size uint64

// String renders s with the largest binary unit that divides it exactly.
func (s Size) String() string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := uint64(s), 0
	for v != 0 && v%1024 == 0 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatUint(v, 10) + " " + units[i]
}

// MarshalText implements encoding.TextMarshaler.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = Size(v)
	return nil
}

var sizeUnits = map[string]uint64{
	"": 1, "b": 1, "byte": 1, "bytes": 1,
	"kb": 1000, "mb": 1000 * 1000, "gb": 1000 * 1000 * 1000, "tb": 1000 * 1000 * 1000 * 1000,
	"k": 1024, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

var errBadSize = errors.New("invalid size (want e.g. \"64 MiB\", \"2 MB\", 1024)")

// ParseSize reads [number][spaces][unit]; decimal units (KB, MB, GB, TB)
// are powers of 1000, binary ones (KiB, MiB, GiB, TiB) powers of 1024,
// case-insensitive. A fractional number is allowed with a unit.
func ParseSize(s string) (uint64, error) {
	if len(s) > maxDurationText {
		return 0, errBadSize
	}
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return 0, errBadSize
	}
	num := s[:i]
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, errBadSize
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil || n > math.MaxUint64/unit {
			return 0, errBadSize
		}
		return n * unit, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, errBadSize
	}
	v := f * float64(unit)
	if v >= math.MaxUint64 {
		return 0, errBadSize
	}
	return uint64(v), nil
}
