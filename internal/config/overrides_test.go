package config

import (
	"slices"
	"testing"
)

func TestEnvOverrides(t *testing.T) {
	got := EnvOverrides([]string{
		"IGGY_TCP_ADDRESS=127.0.0.1:1", "HOME=/root", "IGGY_CONFIG_PATH=x.toml", "IGGY_ROOT_PASSWORD=p",
		"IGGY_BOGUS=1", "IGGY_HEARTBEAT_INTERVAL=5 s", "IGGY_CLUSTER_NODES_0_NAME=a",
	})
	want := []string{"IGGY_TCP_ADDRESS", "IGGY_HEARTBEAT_INTERVAL", "IGGY_CLUSTER_NODES_0_NAME"}
	if !slices.Equal(got, want) {
		t.Fatalf("EnvOverrides = %v, want %v", got, want)
	}
	if got := EnvOverrides([]string{"PATH=/bin"}); len(got) != 0 {
		t.Fatalf("no IGGY_* variables: %v", got)
	}
}
