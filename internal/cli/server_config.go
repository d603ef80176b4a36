package cli

import (
	"fmt"
	"strings"

	"github.com/iggo-dev/iggo/internal/config"
)

// serverConfig is the configuration `iggo server` runs with and what is
// needed to build it again (SIGHUP).
type serverConfig struct {
	cfg     config.Config
	notices []config.Notice
	// path is the configuration file, "" when none.
	path string
	// environ is the process environment with the .env file applied.
	environ []string
	flags   serverFlags
}

// loadServerConfig reads defaults, the file, the environment and the
// flags, without validating.
func loadServerConfig(env Env, f serverFlags) (serverConfig, error) {
	environ, err := config.WithDotEnv(env.Environ)
	if err != nil {
		return serverConfig{}, err
	}
	sc := serverConfig{environ: environ, flags: f, path: f.configPath}
	if sc.path == "" {
		sc.path = lookup(environ, config.EnvConfigPath)
	}
	if err := sc.reload(); err != nil {
		return sc, err
	}
	return sc, nil
}

// reload builds sc.cfg again from the file and environment, then the
// flags.
func (sc *serverConfig) reload() error {
	cfg, notices, err := config.Load(sc.path, sc.environ)
	if err != nil {
		return err
	}
	if sc.flags.address != "" {
		cfg.TCP.Address = sc.flags.address
	}
	if sc.flags.dataPath != "" {
		cfg.System.Path = sc.flags.dataPath
	}
	if sc.flags.logLevel != "" {
		cfg.System.Logging.Level = sc.flags.logLevel
	}
	if sc.flags.replicaSet {
		cfg.Cluster.ReplicaID = sc.flags.replicaID
	}
	cfg.Cluster.Join = sc.flags.join
	sc.cfg, sc.notices = cfg, notices
	return nil
}

// logEnviron is the environment the logger reads RUST_LOG from: without
// it when --log-level was given, so the flag wins.
func (sc *serverConfig) logEnviron() []string {
	if sc.flags.logLevel == "" {
		return sc.environ
	}
	out := make([]string, 0, len(sc.environ))
	for _, kv := range sc.environ {
		if !strings.HasPrefix(kv, config.EnvRustLog+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// printConfig writes the effective configuration with secrets masked;
// notices and validation problems go to standard error.
func printConfig(env Env, sc serverConfig) error {
	header := "Effective configuration (defaults, "
	if sc.path != "" {
		header += "file " + sc.path + ", "
	}
	header += "IGGY_* environment, flags); secrets are shown as " + config.Masked + "."
	if lv := sc.cfg.System.Logging.EffectiveLogLevel(sc.logEnviron()); lv != sc.cfg.System.Logging.Level {
		header += "\nRUST_LOG replaces system.logging.level: " + lv
	}
	if sc.cfg.Cluster.Enabled {
		header += fmt.Sprintf("\nThis node is the roster entry with replica_id %d (--replica-id).", sc.cfg.Cluster.ReplicaID)
	}
	out, err := config.Render(&sc.cfg, config.RenderOptions{Header: header})
	if err != nil {
		return fmt.Errorf("render configuration: %w", err)
	}
	if _, err := env.Stdout.Write(out); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	printNotices(env, sc)
	if err := sc.cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	return nil
}

// checkConfig validates and reports; it opens no listener and does not
// touch the data directory.
func checkConfig(env Env, sc serverConfig) error {
	printNotices(env, sc)
	if err := sc.cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	fmt.Fprintf(env.Stdout, "configuration is valid (%s; %d keys)\n", strings.Join(sc.sources(), ", "), len(config.Keys()))
	return nil
}

// sources names the layers the configuration was built from: the
// defaults, the file, the IGGY_* variables that set keys and the flags
// that did.
func (sc *serverConfig) sources() []string {
	out := []string{"built-in defaults"}
	if sc.path != "" {
		out = append(out, "file "+sc.path)
	}
	if vars := config.EnvOverrides(sc.environ); len(vars) > 0 {
		out = append(out, "environment "+strings.Join(vars, " "))
	}
	var flags []string
	for _, f := range []struct {
		set  bool
		name string
	}{
		{sc.flags.address != "", "--tcp-address"}, {sc.flags.dataPath != "", "--data-path"},
		{sc.flags.logLevel != "", "--log-level"}, {sc.flags.replicaSet, "--replica-id"}, {sc.flags.join, "--join"},
	} {
		if f.set {
			flags = append(flags, f.name)
		}
	}
	if len(flags) > 0 {
		out = append(out, "flags "+strings.Join(flags, " "))
	}
	return out
}

func printNotices(env Env, sc serverConfig) {
	for _, n := range sc.notices {
		kind := "note"
		if n.Warn {
			kind = "warning"
		}
		fmt.Fprintf(env.Stderr, "%s: %s\n", kind, n.Message)
	}
}
