// Package cli is the iggo command line: the cobra root command and its
// subcommands. cmd/iggo only wires it to the process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/spf13/cobra"
)

// Env is what the commands read from the process: arguments, environment
// and output streams, injectable for tests.
type Env struct {
	Args    []string
	Environ []string
	Stdout  io.Writer
	Stderr  io.Writer
}

// Execute runs the command line and returns the process exit code.
func Execute(ctx context.Context, env Env) int {
	root := NewRoot(env)
	root.SetArgs(env.Args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(env.Stderr, "iggo:", err)
		return 1
	}
	return 0
}

// NewRoot returns the root command.
func NewRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "iggo",
		Short:         "Iggo: an Apache Iggy compatible message-streaming server, SDK and CLI",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.AddCommand(newServerCmd(env))
	root.AddCommand(newBenchCmd(env))
	return root
}

type serverFlags struct {
	configPath  string
	fresh       bool
	defaultRoot bool
	address     string
	dataPath    string
	logLevel    string
}

func newServerCmd(env Env) *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the broker",
		Long: `Run the broker. Configuration layers, later wins: built-in defaults, the TOML file
(--config or IGGY_CONFIG_PATH), IGGY_* environment variables (IGGY_ + the TOML key
upper-cased with '.' replaced by '_', e.g. IGGY_TCP_ADDRESS), then these flags.
The root user is created from IGGY_ROOT_USERNAME/IGGY_ROOT_PASSWORD, else iggy/iggy.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServer(cmd, env, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configPath, "config", "", "TOML configuration file (default: $IGGY_CONFIG_PATH, else none)")
	fl.BoolVarP(&f.fresh, "fresh", "f", false, "delete the data directory before starting")
	fl.BoolVar(&f.defaultRoot, "with-default-root-credentials", false, "use iggy/iggy for root credentials that are not set (always the case in Iggo; accepted for compatibility)")
	fl.StringVar(&f.address, "tcp-address", "", "TCP listen address (overrides tcp.address)")
	fl.StringVar(&f.dataPath, "data-path", "", "data directory (overrides system.path)")
	fl.StringVar(&f.logLevel, "log-level", "", "log level: trace, debug, info, warn, error (overrides system.logging.level)")
	return cmd
}

func lookup(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

func runServer(cmd *cobra.Command, env Env, f serverFlags) error {
	environ, err := config.WithDotEnv(env.Environ)
	if err != nil {
		return err
	}
	env.Environ = environ
	path := f.configPath
	if path == "" {
		path = lookup(env.Environ, config.EnvConfigPath)
	}
	cfg, notices, err := config.Load(path, env.Environ)
	if err != nil {
		return err
	}
	if f.address != "" {
		cfg.TCP.Address = f.address
	}
	if f.dataPath != "" {
		cfg.System.Path = f.dataPath
	}
	if f.logLevel != "" {
		cfg.System.Logging.Level = f.logLevel
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	logger := broker.NewLogger(cfg, env.Stderr)
	for _, n := range notices {
		if n.Warn {
			logger.Warn(n.Message)
		} else {
			logger.Debug(n.Message)
		}
	}
	user, pass, err := config.RootCredentials(env.Environ)
	if err != nil {
		return err
	}
	if f.fresh {
		logger.Info("removing the data directory (--fresh)", "path", cfg.System.Path)
		if err := os.RemoveAll(cfg.System.Path); err != nil {
			return fmt.Errorf("remove data directory: %w", err)
		}
	}
	b, err := broker.New(cfg, broker.WithLogger(logger), broker.WithRootCredentials(user, pass))
	if err != nil {
		return err
	}
	if user == config.DefaultRootUsername && pass == config.DefaultRootPassword {
		logger.Warn("root user has the default credentials iggy/iggy; set IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD for anything but local use")
	}
	err = b.Run(cmd.Context())
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
