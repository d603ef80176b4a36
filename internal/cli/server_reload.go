package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/logging"
)

// watchReload applies system.logging.level again on every SIGHUP: the
// configuration file and environment are read again (only the level is
// applied; other changes need a restart). The result is logged as one
// line. It returns the function that stops watching.
func watchReload(ctx context.Context, sc serverConfig, lg *logging.Logging, logger *slog.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reloadLevel(&sc, lg, logger)
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// reloadLevel reads the configuration again and applies its level. The
// line is logged under the more verbose of the old and new filters, so it
// shows whenever either lets info through.
func reloadLevel(sc *serverConfig, lg *logging.Logging, logger *slog.Logger) {
	if err := sc.reload(); err != nil {
		logger.Error("SIGHUP: configuration not reloaded; log level unchanged", "level", lg.Filter(), "err", err)
		return
	}
	text := sc.cfg.System.Logging.EffectiveLogLevel(sc.logEnviron())
	source := "system.logging.level"
	switch {
	case sc.flags.logLevel != "":
		source = "--log-level"
	case text != sc.cfg.System.Logging.Level:
		source = config.EnvRustLog
	}
	next, err := config.ParseLogFilter(text)
	if err != nil {
		logger.Error("SIGHUP: "+source+" is invalid; log level unchanged", "level", lg.Filter(), "err", err)
		return
	}
	old := lg.Filter()
	more := slog.Level(next.Level) < lg.Levels().Level()
	if more {
		lg.SetFilter(text)
	}
	logger.Info("SIGHUP: log level reloaded", "from", old, "to", text, "source", source)
	if !more {
		lg.SetFilter(text)
	}
}
