// Command iggo is the one Iggo binary: the broker (`iggo server`), the
// management and data CLI, and the benchmark tool. It only wires the
// process (arguments, environment, signals) to internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggo-dev/iggo/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.Env{Args: os.Args[1:], Environ: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
