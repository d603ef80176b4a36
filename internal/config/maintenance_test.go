package config

import (
	"strings"
	"testing"
	"time"
)

func TestDataMaintenance(t *testing.T) {
	c := Default()
	if got := c.DataMaintenance.RetentionInterval(); got != time.Minute {
		t.Fatalf("default retention interval %v", got)
	}
	c.DataMaintenance.Messages.CleanerEnabled = false
	if got := c.DataMaintenance.RetentionInterval(); got >= 0 {
		t.Fatalf("disabled cleaner interval %v, want negative", got)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("disabled cleaner with interval: %v", err)
	}
	c.DataMaintenance.Messages = MessagesMaintenanceConfig{CleanerEnabled: true}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "data_maintenance.messages.interval") {
		t.Fatalf("zero interval: %v", err)
	}
}
