package broker

import (
	"path/filepath"
	"testing"

	"github.com/iggo-dev/iggo/internal/config"
)

func TestLogFileFollowsConfig(t *testing.T) {
	c := config.Default()
	c.System.Path = "/data"
	if got, want := logFile(c), filepath.Join("/data", "logs", config.LogFileName); got != want {
		t.Fatalf("logFile = %q, want %q", got, want)
	}
	c.System.Logging.Path = "/var/log/iggo"
	if got, want := logFile(c), filepath.Join("/var/log/iggo", config.LogFileName); got != want {
		t.Fatalf("absolute log path: %q, want %q", got, want)
	}
	c.System.Logging.FileEnabled = false
	if got := logFile(c); got != "" {
		t.Fatalf("file off: %q", got)
	}
}
