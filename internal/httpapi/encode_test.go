package httpapi

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    uint64
		want string
	}{
		{"zero", 0, "0 B"},
		{"below a kilobyte", 999, "999 B"},
		{"one KiB", 1024, "1 KiB"},
		{"decimal KB", 1234, "1.234 KB"},
		{"half KiB step", 3211776, "3136.5 KiB"},
		{"one KB", 1000, "1 KB"},
		{"KB always fits from 1000 up", 1001, "1.001 KB"},
		{"MiB", 5 << 20, "5 MiB"},
		{"MB with decimals", 2_500_000, "2.5 MB"},
		{"GiB", 3 << 30, "3 GiB"},
		{"EiB", 1 << 60, "1 EiB"},
		{"u64 max", math.MaxUint64, "18446744073709551.615 KB"},
		{"trailing zeros dropped", 1_200_000, "1.2 MB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatSize(tc.n); got != tc.want {
				t.Fatalf("formatSize(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

func TestU128JSON(t *testing.T) {
	max := U128{Hi: math.MaxUint64, Lo: math.MaxUint64}
	out, err := json.Marshal(max)
	if err != nil || string(out) != "340282366920938463463374607431768211455" {
		t.Fatalf("marshal max = %s, %v", out, err)
	}
	out, _ = json.Marshal(U128{Lo: math.MaxUint64})
	if string(out) != "18446744073709551615" {
		t.Fatalf("marshal u64 max = %s", out)
	}
	for _, tc := range []struct {
		name string
		in   string
		want U128
		bad  bool
	}{
		{"number", `42`, U128{Lo: 42}, false},
		{"u64 max number", `18446744073709551615`, U128{Lo: math.MaxUint64}, false},
		{"number above u64", `18446744073709551616`, U128{Hi: 1}, false},
		{"number above u128", `340282366920938463463374607431768211456`, U128{}, true},
		{"decimal string", `"18446744073709551616"`, U128{Hi: 1}, false},
		{"u128 max string", `"340282366920938463463374607431768211455"`, max, false},
		{"above u128", `"340282366920938463463374607431768211456"`, U128{}, true},
		{"hex", `"000000000000000100000000000000ff"`, U128{Hi: 1, Lo: 255}, false},
		{"32 decimal digits are decimal", `"00000000000000000000000000000042"`, U128{Lo: 42}, false},
		{"uuid", `"00000000-0000-0001-0000-0000000000ff"`, U128{Hi: 1, Lo: 255}, false},
		{"negative", `-1`, U128{}, true},
		{"float", `1.5`, U128{}, true},
		{"garbage string", `"abc"`, U128{}, true},
		{"null", `null`, U128{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u U128
			err := json.Unmarshal([]byte(tc.in), &u)
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted %s as %+v", tc.in, u)
				}
				return
			}
			if err != nil || u != tc.want {
				t.Fatalf("Unmarshal(%s) = %+v, %v; want %+v", tc.in, u, err, tc.want)
			}
		})
	}
}

func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		code   uint32
		status int
		name   string
		field  string
	}{
		{1009, 404, "stream_id_not_found", "stream_id"},
		{2010, 404, "topic_id_not_found", "topic_id"},
		{3007, 404, "partition_not_found", "partition_id"},
		{40, 401, "unauthenticated", ""},
		{77, 401, "access_token_missing", ""},
		{41, 403, "unauthorized", ""},
		{57, 503, "transient_not_committed", ""},
		{1012, 400, "stream_name_already_exists", "name"},
		{46, 400, "user_already_exists", "username"},
		{4100, 400, "invalid_offset", "offset"},
		{42, 400, "invalid_credentials", ""},
	} {
		e := codeError(tc.code)
		if e.Status != tc.status || e.Code != tc.name || e.ID != tc.code {
			t.Errorf("code %d: %+v", tc.code, e)
		}
		got := ""
		if e.Field != nil {
			got = *e.Field
		}
		if got != tc.field {
			t.Errorf("code %d: field %q, want %q", tc.code, got, tc.field)
		}
	}
	if !codeError(wire.ErrTransientNotAccepted.Code).RetryAfter {
		t.Error("58 without Retry-After")
	}
}
