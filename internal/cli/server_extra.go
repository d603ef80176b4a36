package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/telemetry"
)

// telemetryFlushTimeout bounds the final export at exit.
const telemetryFlushTimeout = 5 * time.Second

// serverTelemetry builds the OpenTelemetry provider of [telemetry] (nil
// when disabled). Its export errors go to plain, the standard-error and
// file logger, never back into the exporter. The caller fans the
// provider's log handler into the server logger, hands the provider to
// the broker and calls the returned function after the broker stopped.
func serverTelemetry(ctx context.Context, cfg config.Config, plain *slog.Logger) (*telemetry.Provider, func(), error) {
	p, err := telemetry.New(ctx, cfg.Telemetry, telemetry.Options{Version: broker.Version, Logger: plain})
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
		defer cancel()
		if err := p.Shutdown(sctx); err != nil {
			plain.Warn("telemetry shutdown", "err", err)
		}
	}
	return p, shutdown, nil
}

// logHandlers is p's log handler as a fan-out list (empty for nil).
func logHandlers(p *telemetry.Provider) []slog.Handler {
	if h := p.LogHandler(); h != nil {
		return []slog.Handler{h}
	}
	return nil
}
