package config

import (
	"fmt"
	"time"
)

// StorageConfig is [storage]: how this node looks after the partition
// data it stores (an Iggo extension; the reference has no such table).
type StorageConfig struct {
	// ScrubInterval is the period of the background scrubber: one full
	// pass re-verifying every sealed segment and index of every partition
	// per interval, "0" disables it (`iggo partition verify` still works).
	ScrubInterval Duration `toml:"scrub_interval"`
	// ScrubRate bounds the scrubber's reads in bytes per second; "0"
	// (the default) computes it so that a pass spreads over the interval,
	// at least 1 MiB and at most 16 MiB per second.
	ScrubRate Size `toml:"scrub_rate"`
}

// MinScrubRate is the smallest explicit storage.scrub_rate.
const MinScrubRate = 64 << 10

func defaultStorage() StorageConfig {
	return StorageConfig{ScrubInterval: Duration(24 * time.Hour)}
}

func (s StorageConfig) validate() []error {
	var errs []error
	if s.ScrubInterval < 0 {
		errs = append(errs, fmt.Errorf("storage.scrub_interval: must not be negative"))
	}
	if s.ScrubRate != 0 && s.ScrubRate < MinScrubRate {
		errs = append(errs, fmt.Errorf("storage.scrub_rate: %s is below %s (0 computes it from the interval)", s.ScrubRate, Size(MinScrubRate)))
	}
	return errs
}
