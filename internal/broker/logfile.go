package broker

import (
	"path/filepath"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/logging"
)

// logFile is the active log file the configuration asks for, or "" when
// the log file is off (the diagnostics snapshot copies its tail).
func logFile(cfg config.Config) string {
	lc := cfg.System.Logging
	if !lc.FileEnabled {
		return ""
	}
	return filepath.Join(logging.LogDir(cfg.System.Path, lc.Path), config.LogFileName)
}
