package config

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30 s", 30 * time.Second, true},
		{"1 m", time.Minute, true},
		{"7 days", 7 * 24 * time.Hour, true},
		{"500ms", 500 * time.Millisecond, true},
		{"1h 30m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"0", 0, true},
		{"2 weeks", 14 * 24 * time.Hour, true},
		{"10 µs", 10 * time.Microsecond, true},
		{"", 0, false},
		{"s", 0, false},
		{"30", 0, false},
		{"30 parsecs", 0, false},
		{"-1 s", 0, false},
		{"99999999999999999999 s", 0, false},
		{"9223372037 s", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"64 MiB", 64 << 20, true},
		{"2 MB", 2_000_000, true},
		{"1024", 1024, true},
		{"1.5 GiB", 3 << 29, true},
		{"10kb", 10_000, true},
		{"7 B", 7, true},
		{"", 0, false},
		{"MiB", 0, false},
		{"1 XB", 0, false},
		{"99999999999 TiB", 0, false},
		{"1.2.3 MB", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseSize(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestSizeStringRoundTrip(t *testing.T) {
	for _, s := range []Size{0, 1, 1000, 1024, 64 << 20, 3 << 30, 5<<40 + 1} {
		got, err := ParseSize(s.String())
		if err != nil || Size(got) != s {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s.String(), got, err, s)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30 s", "1h30m", "0", "7 days", "1 w 2 d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("negative duration %v from %q", d, s)
		}
		again, err := ParseDuration(Duration(d).String())
		if err != nil || again != d {
			t.Fatalf("round trip of %v via %q: %v, %v", d, Duration(d).String(), again, err)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64 MiB", "2 MB", "1024", "1.5 GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		again, err := ParseSize(Size(n).String())
		if err != nil || again != n {
			t.Fatalf("round trip of %d via %q: %v, %v", n, Size(n).String(), again, err)
		}
	})
}
