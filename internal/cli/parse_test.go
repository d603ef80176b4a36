package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want wire.Identifier
		ok   bool
	}{
		{"0", wire.NumericID(0), true},
		{"42", wire.NumericID(42), true},
		{"4294967295", wire.NumericID(math.MaxUint32), true},
		{"4294967296", wire.Identifier{}, false},
		{"orders", wire.NamedID("orders"), true},
		{"42a", wire.NamedID("42a"), true},
		{"-1", wire.NamedID("-1"), true},
		{"", wire.Identifier{}, false},
		{string(make([]byte, 256)), wire.Identifier{}, false},
	} {
		t.Run(fmt.Sprintf("%.12q", tc.in), func(t *testing.T) {
			got, err := parseID("stream", tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				if exitCode(err) != ExitUsage {
					t.Fatalf("exit code %d for %v", exitCode(err), err)
				}
				return
			}
			if !cmp.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	day := uint64(24 * time.Hour / time.Microsecond)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    func() (uint64, error)
		want uint64
		ok   bool
	}{
		{"expiry days", func() (uint64, error) { return parseExpiry("x", "7d") }, 7 * day, true},
		{"expiry humantime", func() (uint64, error) { return parseExpiry("x", "1h 30m") }, uint64(90 * time.Minute / time.Microsecond), true},
		{"expiry go syntax", func() (uint64, error) { return parseExpiry("x", "1h30m") }, uint64(90 * time.Minute / time.Microsecond), true},
		{"expiry never", func() (uint64, error) { return parseExpiry("x", "never") }, wire.ExpiryNever, true},
		{"expiry default", func() (uint64, error) { return parseExpiry("x", "0") }, 0, true},
		{"expiry junk", func() (uint64, error) { return parseExpiry("x", "soon") }, 0, false},
		{"expiry below a microsecond", func() (uint64, error) { return parseExpiry("x", "5ns") }, 0, false},
		{"size GiB", func() (uint64, error) { return parseSize("x", "1GiB", false) }, 1 << 30, true},
		{"size decimal", func() (uint64, error) { return parseSize("x", "2 MB", false) }, 2_000_000, true},
		{"size bytes", func() (uint64, error) { return parseSize("x", "1048576", false) }, 1 << 20, true},
		{"size unlimited", func() (uint64, error) { return parseSize("x", "unlimited", true) }, wire.SizeUnlimited, true},
		{"size unlimited not allowed", func() (uint64, error) { return parseSize("x", "unlimited", false) }, 0, false},
		{"size junk", func() (uint64, error) { return parseSize("x", "big", true) }, 0, false},
		{"timestamp micros", func() (uint64, error) { return parseTimestamp("1700000000000000", now) }, 1700000000000000, true},
		{"timestamp RFC 3339", func() (uint64, error) { return parseTimestamp("2025-06-01T11:00:00Z", now) }, uint64(now.Add(-time.Hour).UnixMicro()), true},
		{"timestamp ago", func() (uint64, error) { return parseTimestamp("15m", now) }, uint64(now.Add(-15 * time.Minute).UnixMicro()), true},
		{"timestamp ago with minus", func() (uint64, error) { return parseTimestamp("-2h", now) }, uint64(now.Add(-2 * time.Hour).UnixMicro()), true},
		{"timestamp junk", func() (uint64, error) { return parseTimestamp("yesterday", now) }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f()
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("got %d, %v; want %d, ok %v", got, err, tc.want, tc.ok)
			}
			if err != nil && exitCode(err) != ExitUsage {
				t.Fatalf("exit code %d for %v", exitCode(err), err)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want wire.UserHeader
		ok   bool
	}{
		{"source=web", wire.UserHeader{Key: wire.StringHeader("source"), Value: wire.StringHeader("web")}, true},
		{"eq=a=b", wire.UserHeader{Key: wire.StringHeader("eq"), Value: wire.StringHeader("a=b")}, true},
		{"n:u32=5", wire.UserHeader{Key: wire.StringHeader("n"), Value: wire.Uint32Header(5)}, true},
		{"n:int64=-5", wire.UserHeader{Key: wire.StringHeader("n"), Value: wire.Int64Header(-5)}, true},
		{"ok:bool=true", wire.UserHeader{Key: wire.StringHeader("ok"), Value: wire.BoolHeader(true)}, true},
		{"f:float64=0.25", wire.UserHeader{Key: wire.StringHeader("f"), Value: wire.Float64Header(0.25)}, true},
		{"b:raw=0xdead", wire.UserHeader{Key: wire.StringHeader("b"), Value: wire.RawHeader([]byte{0xde, 0xad})}, true},
		{"n:u8=256", wire.UserHeader{}, false},
		{"n:bool=maybe", wire.UserHeader{}, false},
		{"n:complex=1", wire.UserHeader{}, false},
		{"novalue", wire.UserHeader{}, false},
		{"=v", wire.UserHeader{}, false},
		{"k=", wire.UserHeader{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseHeader(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err == nil && !cmp.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtSize(0), "0 B"},
		{fmtSize(1023), "1023 B"},
		{fmtSize(1536), "1.5 KiB"},
		{fmtSize(1 << 30), "1 GiB"},
		{fmtExpiry(0), "never"},
		{fmtExpiry(wire.ExpiryNever), "never"},
		{fmtExpiry(uint64(7 * 24 * time.Hour / time.Microsecond)), "7d"},
		{fmtExpiry(uint64((26*time.Hour + 30*time.Second) / time.Microsecond)), "1d 2h 30s"},
		{fmtMaxSize(wire.SizeUnlimited), "unlimited"},
		{fmtMaxSize(5 << 30), "5 GiB"},
		{fmtLocalRetentionSize(0), "server default"},
		{fmtLocalRetentionSize(wire.LocalRetentionKeepAll), "keep all"},
		{fmtLocalRetentionSize(10 << 30), "10 GiB"},
		{fmtLocalRetentionAge(0), "server default"},
		{fmtLocalRetentionAge(wire.LocalRetentionNoAge), "none"},
		{fmtLocalRetentionAge(uint64(48 * time.Hour / time.Microsecond)), "2d"},
		{fmtID(wire.Uint128{Lo: 7}), "7"},
		{fmtID(client.NewMessageID())[14:15], "4"}, // the UUID version digit
		{fmtPayload([]byte("plain text")), "plain text"},
		{fmtPayload([]byte("a\nb")), `"a\nb"`},
		{fmtPayload([]byte{0xff}), "hex:ff"}, // not UTF-8: a hex preview
		{fmtTime(0), "-"},
		{fmtTimeMicros(1_700_000_000_123_456), "2023-11-14T22:13:20.123456Z"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTargetLayers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []target
		want   target
	}{
		{"address", []target{{Addr: "a:1"}, {Addr: "b:2"}}, target{Addr: "b:2"}},
		{"token replaces credentials", []target{{Username: "u", Password: "p"}, {Token: "t"}}, target{Token: "t"}},
		{"credentials replace a token", []target{{Token: "t"}, {Password: "p"}}, target{Password: "p"}},
		{"username keeps a lower password", []target{{Username: "u", Password: "p"}, {Username: "v"}}, target{Username: "v", Password: "p"}},
		{"a CA turns TLS on", []target{{}, {TLSCA: "ca.pem"}}, target{TLS: true, TLSCA: "ca.pem"}},
		{"insecure turns TLS on", []target{{TLSInsecure: true}}, target{TLS: true, TLSInsecure: true}},
		{"server name turns TLS on", []target{{TLSServerName: "x"}}, target{TLS: true, TLSServerName: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got target
			for _, l := range tc.layers {
				got.over(l)
			}
			if !cmp.Equal(got, tc.want) {
				t.Fatalf("%s", cmp.Diff(tc.want, got))
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int
		line string
	}{
		{"server error", &client.CommandError{Command: wire.CmdGetStream, Err: wire.ErrStreamIDNotFound}, ExitError, "StreamIdNotFound (error 1009)"},
		{"server error with context", wrapf(&client.CommandError{Command: wire.CmdCreateStream, Err: wire.ErrStreamNameAlreadyExists}, "create stream x"), ExitError, "create stream x: StreamNameAlreadyExists (error 1012)"},
		{"usage", usagef("bad %s", "flag"), ExitUsage, "bad flag"},
		{"cobra usage", errors.New(`unknown command "x" for "iggo"`), ExitUsage, `unknown command "x" for "iggo"`},
		{"refused login", &wire.EvictionError{Reason: wire.EvictInvalidCredentials}, ExitAuth, "refused: InvalidCredentials (error 42)"},
		{"other eviction", &wire.EvictionError{Reason: wire.EvictStaleClient}, ExitConnection, "evicted by the server: StaleClient (error 30)"},
		{"connection", &connError{addr: "h:1", err: io.EOF}, ExitConnection, "cannot connect to h:1: EOF"},
		{"lost connection", &client.ConnError{Err: io.EOF}, ExitConnection, "connection lost: EOF"},
		{"timeout", wrapf(context.DeadlineExceeded, "ping"), ExitConnection, "ping: timed out after 1s (raise --timeout)"},
		{"interrupted", context.Canceled, ExitInterrupted, "context canceled"},
		{"other", errors.New("disk on fire\nreally"), ExitError, "disk on fire; really"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.err); got != tc.code {
				t.Errorf("exit code %d, want %d", got, tc.code)
			}
			if got := errorLine(tc.err, "1s"); got != tc.line {
				t.Errorf("line %q, want %q", got, tc.line)
			}
		})
	}
}
