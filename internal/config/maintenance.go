package config

import (
	"errors"
	"time"
)

// DataMaintenanceConfig is [data_maintenance].
type DataMaintenanceConfig struct {
	Messages MessagesMaintenanceConfig `toml:"messages"`
}

// MessagesMaintenanceConfig is [data_maintenance.messages]: the retention
// loop of the partition plane (message_expiry, max_topic_size), config.md
// §4.
type MessagesMaintenanceConfig struct {
	// CleanerEnabled runs retention in the background.
	CleanerEnabled bool `toml:"cleaner_enabled"`
	// Interval is the period between retention passes (default 1 m).
	Interval Duration `toml:"interval"`
}

func defaultDataMaintenance() DataMaintenanceConfig {
	return DataMaintenanceConfig{Messages: MessagesMaintenanceConfig{CleanerEnabled: true, Interval: Duration(time.Minute)}}
}

// RetentionInterval is the period the partition plane's retention loop
// uses: negative when the cleaner is disabled.
func (d DataMaintenanceConfig) RetentionInterval() time.Duration {
	if !d.Messages.CleanerEnabled {
		return -1
	}
	return d.Messages.Interval.Std()
}

func (d DataMaintenanceConfig) validate() []error {
	if d.Messages.CleanerEnabled && d.Messages.Interval <= 0 {
		return []error{errors.New("data_maintenance.messages.interval: must be positive when the cleaner is enabled")}
	}
	return nil
}
