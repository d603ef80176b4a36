package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/logging"
	"github.com/iggo-dev/iggo/internal/systemd"
	"github.com/spf13/cobra"
)

type serverFlags struct {
	configPath  string
	fresh       bool
	defaultRoot bool
	address     string
	dataPath    string
	logLevel    string
	printConfig bool
	checkConfig bool
	// replicaID is --replica-id, applied when replicaSet.
	replicaID  int
	replicaSet bool
	// join is --join: this node is being added to a running cluster.
	join bool
}

// serverLong is the help of `iggo server`.
const serverLong = `Run the broker. Configuration layers, later wins: built-in defaults, the TOML file
(--config or IGGY_CONFIG_PATH), IGGY_* environment variables (IGGY_ + the TOML key
upper-cased with '.' replaced by '_', e.g. IGGY_TCP_ADDRESS), then these flags.
The root user is created from IGGY_ROOT_USERNAME/IGGY_ROOT_PASSWORD, else iggy/iggy.

Logs go to standard error and to {system.path}/{system.logging.path}/iggy-server.log;
RUST_LOG replaces system.logging.level, --log-level replaces both. SIGHUP re-reads
the configuration file and applies its system.logging.level. IGGO_CPU_PROFILE=path
and IGGO_TRACE=path write a CPU profile and an execution trace to path.<pid>. Under systemd
(Type=notify) the server reports READY=1, STATUS=, STOPPING=1 and watchdog pings.

--print-config writes the effective configuration (secrets as ******) and
--check-config validates it; neither opens a listener or touches the data
directory, and both exit 1 when the configuration is invalid. See
docs/OPERATIONS.md.`

func newServerCmd(env Env) *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the broker",
		Long:  serverLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.printConfig && f.checkConfig {
				return usagef("--print-config and --check-config are exclusive")
			}
			f.replicaSet = cmd.Flags().Changed("replica-id")
			return runServer(cmd, env, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configPath, "config", "", "TOML configuration file (default: $IGGY_CONFIG_PATH, else none)")
	fl.BoolVarP(&f.fresh, "fresh", "f", false, "delete the data directory before starting")
	fl.BoolVar(&f.defaultRoot, "with-default-root-credentials", false, "use iggy/iggy for root credentials that are not set (always the case in Iggo; accepted for compatibility)")
	fl.StringVar(&f.address, "tcp-address", "", "TCP listen address (overrides tcp.address)")
	fl.StringVar(&f.dataPath, "data-path", "", "data directory (overrides system.path)")
	fl.StringVar(&f.logLevel, "log-level", "", "log filter, e.g. info or warn,server=debug (overrides system.logging.level and RUST_LOG)")
	fl.IntVar(&f.replicaID, "replica-id", 0, "which [[cluster.nodes]] entry this node is (cluster mode)")
	fl.BoolVar(&f.join, "join", false, "join a running cluster: create no raft group, wait for 'iggo cluster add-node' (cluster mode)")
	fl.BoolVar(&f.printConfig, "print-config", false, "print the effective configuration (secrets masked) and exit")
	fl.BoolVar(&f.checkConfig, "check-config", false, "validate the configuration, print any problems and exit (1 when invalid)")
	return cmd
}

func runServer(cmd *cobra.Command, env Env, f serverFlags) error {
	sc, err := loadServerConfig(env, f)
	if err != nil {
		return err
	}
	env.Environ = sc.environ // with the .env file applied
	switch {
	case f.printConfig:
		return printConfig(env, sc)
	case f.checkConfig:
		return checkConfig(env, sc)
	}
	cfg := sc.cfg
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	user, pass, err := config.RootCredentials(env.Environ)
	if err != nil {
		return err
	}
	if err := serverPreflight(&cfg); err != nil { // server_preflight.go: before anything is created or removed
		return err
	}
	// --fresh runs before the log file opens, which lives under the data
	// directory by default.
	if f.fresh {
		if err := os.RemoveAll(cfg.System.Path); err != nil {
			return fmt.Errorf("remove data directory (--fresh): %w", err)
		}
	}
	ctx := cmd.Context()
	tuneGC(env.Environ)
	stopProf, err := startProfiles(env.Environ)
	if err != nil {
		return err
	}
	defer stopProf()
	lg, err := logging.New(logging.Options{
		Config:   cfg.System.Logging,
		DataPath: cfg.System.Path,
		Environ:  sc.logEnviron(),
		Stderr:   env.Stderr,
	})
	if err != nil {
		return err
	}
	defer lg.Close()
	tel, stopTel, err := serverTelemetry(ctx, cfg, lg.Logger())
	if err != nil {
		return err
	}
	defer stopTel()
	// The server logger also exports through OpenTelemetry when enabled.
	logger := lg.WithExtra(logHandlers(tel)...)
	ctx, stopParentWatch := exitWithGoRun(ctx, logger)
	defer stopParentWatch()
	bgCtx, stopBg := context.WithCancel(context.Background())
	defer stopBg()
	go lg.Run(bgCtx)
	// SIGHUP is caught from here on, so a reload during a long recovery
	// does not end the process (its default action).
	stopReload := watchReload(bgCtx, sc, lg, logger)
	defer stopReload()
	for _, n := range sc.notices {
		if n.Warn {
			logger.Warn(n.Message)
		} else {
			logger.Debug(n.Message)
		}
	}

	// The watchdog runs from before recovery, so a slow start does not
	// trip it (ops.md §7).
	notify := newNotifier(env.Environ, logger)
	defer notify.Close()
	go notify.Watchdog(bgCtx, notifyErrorLogger(logger))

	if f.fresh {
		logger.Info("removed the data directory (--fresh)", "path", cfg.System.Path)
	}
	b, err := broker.New(cfg, broker.WithLogger(logger), broker.WithRootCredentials(user, pass), broker.WithTelemetry(tel))
	if err != nil {
		sendStatus(notify, logger, "failed to start: "+err.Error())
		return err
	}
	if user == config.DefaultRootUsername && pass == config.DefaultRootPassword {
		logger.Warn("root user has the default credentials iggy/iggy; set IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD for anything but local use")
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	done := make(chan error, 1)
	go func() { done <- b.Run(runCtx) }()
	// Every listener is bound by broker.New, so the kernel accepts
	// connections from here on; "ready" follows the "listening" lines.
	select {
	case <-b.Serving():
	case err := <-done:
		return err
	}
	status := servingStatus(b)
	if notify != nil {
		if err := notify.Ready(status); err != nil {
			logger.Warn("systemd notification failed", "err", err)
		}
	}
	logger.Info("iggo server ready", "status", status, "pid", os.Getpid(), "log_file", lg.FilePath())

	select {
	case <-ctx.Done():
		sendStopping(notify, logger, "shutting down")
		stopRun()
		err = <-done
	case err = <-done:
		msg := "stopped"
		if err != nil {
			msg = "stopped: " + err.Error()
		}
		sendStopping(notify, logger, msg)
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// notifyErrorLogger reports the first watchdog send failure; later ones
// repeat it and are dropped.
func notifyErrorLogger(logger *slog.Logger) func(error) {
	reported := false
	return func(err error) {
		if !reported {
			reported = true
			logger.Warn("systemd watchdog notification failed", "err", err)
		}
	}
}

func newNotifier(environ []string, logger *slog.Logger) *systemd.Notifier {
	n, err := systemd.New(environ, os.Getpid())
	if err != nil {
		logger.Warn("systemd notification disabled", "err", err)
		return nil
	}
	return n
}

func sendStatus(n *systemd.Notifier, logger *slog.Logger, status string) {
	if err := n.Status(status); err != nil {
		logger.Warn("systemd notification failed", "err", err)
	}
}

func sendStopping(n *systemd.Notifier, logger *slog.Logger, status string) {
	if err := n.Stopping(status); err != nil {
		logger.Warn("systemd notification failed", "err", err)
	}
}
