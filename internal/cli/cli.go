// Package cli is the iggo command line: the cobra root command and its
// subcommands. cmd/iggo only wires it to the process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/spf13/cobra"
)

// Env is what the commands read from the process: arguments, environment
// and output streams, injectable for tests.
type Env struct {
	Args    []string
	Environ []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
}

// stdin returns the standard input, empty when none was given.
func (e Env) stdin() io.Reader {
	if e.Stdin == nil {
		return strings.NewReader("")
	}
	return e.Stdin
}

// Execute runs the command line and returns the process exit code (see
// the Exit* constants): errors are printed as one line on standard error,
// "iggo: <message>".
func Execute(ctx context.Context, env Env) int {
	root, a := newRoot(env)
	root.SetArgs(env.Args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if _, known := errors.AsType[*tlsMismatchError](err); !known && (isConnectionError(err) || isProtocolError(err)) {
		if m := a.explainTLSMismatch(ctx, err); m != nil { // tlsmismatch.go
			err = m
		}
	}
	code := exitCode(err)
	if code == ExitInterrupted && ctx.Err() == nil {
		code = ExitError
	}
	if isServerCmd(cmd) && code != ExitUsage {
		// The server's own exit codes (docs/OPERATIONS.md): 0 after a
		// shutdown, 2 usage, 1 any failure to start or to run, including a
		// listen address in use.
		code = ExitError
	}
	timeout := ""
	if a.timeout > 0 {
		timeout = a.timeout.String()
	}
	fmt.Fprintln(env.Stderr, "iggo:", errorLine(err, timeout))
	return code
}

// isServerCmd reports whether cmd is `iggo server`.
func isServerCmd(cmd *cobra.Command) bool {
	return cmd != nil && cmd.Name() == "server" && cmd.HasParent() && !cmd.Parent().HasParent()
}

// NewRoot returns the root command.
func NewRoot(env Env) *cobra.Command {
	root, _ := newRoot(env)
	return root
}

// rootLong is the root help: the connection rules and exit codes.
const rootLong = `iggo is the Iggo broker (iggo server) and a command line client for any server
speaking the Apache Iggy binary protocol 0.11.0.

Streams, topics, consumer groups and users are addressed by name or numeric id;
an argument made only of digits is an id.

Connection settings, later wins: defaults (127.0.0.1:8090, user iggy, password
iggy), the saved context (--context, IGGO_CONTEXT, else the current one; see
'iggo context'), the environment (IGGO_ADDR, IGGO_TRANSPORT, IGGO_USERNAME,
IGGO_PASSWORD, IGGO_TOKEN, IGGO_TLS, IGGO_TLS_CA, IGGO_TLS_INSECURE,
IGGO_TLS_SERVER_NAME), then the flags (--addr, --transport, --username,
--password, --token, --tls, --tls-ca, --tls-insecure, --tls-server-name). A
token replaces a lower layer's username and password and vice versa. These
flags, --context, --output and --timeout are global: they may come before or
after the subcommand (iggo --addr HOST:PORT --tls stream list).

Exit codes: 0 success; 1 error (including every error the server answers,
named in the message, e.g. StreamIdNotFound); 2 usage (unknown command or
flag, bad argument); 3 connection (unreachable server, TLS, lost connection,
timeout); 4 login refused; 130 interrupted. 'iggo server' exits 0 after a
shutdown, 1 when it cannot start or fails, 2 on a usage error.`

// newRoot builds the command tree. Adding a command is one line in the
// AddCommand list.
func newRoot(env Env) (*cobra.Command, *app) {
	a := &app{env: env, output: outputTable, timeout: DefaultTimeout}
	root := &cobra.Command{
		Use:                        "iggo",
		Short:                      "Iggo: an Apache Iggy compatible message-streaming server, SDK and CLI",
		Long:                       rootLong,
		SilenceUsage:               true,
		SilenceErrors:              true,
		Version:                    broker.Version,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				hint := ""
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					hint = "; did you mean " + strconv.Quote(s[0]) + "?"
				}
				return usagef("unknown command %q%s (see 'iggo --help')", args[0], hint)
			}
			return cmd.Help()
		},
	}
	root.SetVersionTemplate(versionText())
	root.Flags().BoolP("version", "v", false, "print the iggo version, the Iggy protocol version and build information")
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetIn(env.stdin())
	// flagerrors.go: a value that does not parse names the flag.
	root.SetFlagErrorFunc(flagError)
	// The client flags are global: before or after the subcommand.
	a.addClientFlags(root)
	root.AddCommand(
		a.ownFlagsOnly(newServerCmd(env)),
		a.ownFlagsOnly(newBenchCmd(env)),
		a.pingCmd(),
		a.meCmd(),
		a.statsCmd(),
		a.streamCmd(),
		a.topicCmd(),
		a.partitionCmd(),
		a.segmentCmd(),
		a.groupCmd(),
		a.offsetCmd(),
		a.userCmd(),
		a.patCmd(),
		a.clientCmd(),
		a.optionsCmd(),
		a.withLocalCluster(a.clusterCmd()),
		a.snapshotCmd(),
		a.sendCmd(),
		a.pollCmd(),
		a.contextCmd(),
		a.versionCmd(),
	)
	return root, a
}

// app holds the state shared by the client commands: the process
// environment and the values of the shared flags.
type app struct {
	env     Env
	conn    connFlags
	output  string
	timeout time.Duration
	// dialed is the target of the last connection attempt, nil before
	// one.
	dialed *target
	// origin says where the resolved target's TLS setting came from.
	origin tlsOrigin
	// unanswered is set while the connection dialed has not had an
	// exchange watched by watchPlainTLS.
	unanswered bool
}

func lookup(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
