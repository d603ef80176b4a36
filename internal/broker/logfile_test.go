package broker

import (
	"net"
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

func TestConsoleURL(t *testing.T) {
	for _, tc := range []struct {
		addr string
		tls  bool
		want string
	}{
		{"127.0.0.1:3000", false, "http://127.0.0.1:3000/ui/"},
		{"0.0.0.0:3000", true, "https://localhost:3000/ui/"},
		{"[::]:3000", false, "http://localhost:3000/ui/"},
		{"[::1]:3000", false, "http://[::1]:3000/ui/"},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := consoleURL(a, tc.tls); got != tc.want {
			t.Errorf("consoleURL(%s, %v) = %q, want %q", tc.addr, tc.tls, got, tc.want)
		}
	}
}
