package config

import (
	"strings"
	"testing"
	"time"
)

func TestStorageScrub(t *testing.T) {
	c := Default()
	if c.Storage.ScrubInterval.Std() != 24*time.Hour || c.Storage.ScrubRate != 0 {
		t.Fatalf("defaults %+v", c.Storage)
	}
	for _, tc := range []struct {
		name, interval, rate string
		wantErr              string
		wantInterval         time.Duration
		wantRate             Size
	}{
		{name: "disabled", interval: "0", rate: "0", wantInterval: 0},
		{name: "explicit", interval: "6 h", rate: "8 MiB", wantInterval: 6 * time.Hour, wantRate: 8 << 20},
		{name: "rate too small", interval: "1 h", rate: "1 KiB", wantErr: "storage.scrub_rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"IGGY_STORAGE_SCRUB_INTERVAL=" + tc.interval, "IGGY_STORAGE_SCRUB_RATE=" + tc.rate}
			c, _, err := Load("", env)
			if err == nil {
				err = c.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Storage.ScrubInterval.Std() != tc.wantInterval || c.Storage.ScrubRate != tc.wantRate {
				t.Fatalf("got %+v", c.Storage)
			}
		})
	}
}
