package itest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/catalog/catalogtest"
	"github.com/iggo-dev/iggo/internal/config"
)

// The crash tests re-execute the test binary as a broker process and
// SIGKILL it. childDirEnv carries the data directory, childModeEnv which
// broker to run.
const (
	childDirEnv  = "IGGO_ITEST_CHILD_DIR"
	childModeEnv = "IGGO_ITEST_CHILD_MODE"
)

// Child broker modes.
const (
	// childMetadata is the full broker with its metadata plane, taking a
	// snapshot every 7 entries so crashes land around snapshots too.
	childMetadata = "metadata"
	// childCatalog serves the partition plane alone through an in-memory
	// catalog holding stream 1 topic 1 (crashSettings), so a crash test of
	// the data path does not depend on metadata writes.
	childCatalog = "catalog"
)

// runChild serves until killed; it prints "ADDR host:port" on stdout once
// listening.
func runChild(dir, mode string) int {
	cfg := config.Default()
	cfg.TCP.Address = "127.0.0.1:0"
	cfg.QUIC.Enabled, cfg.WebSocket.Enabled = false, false // off the fixed default ports
	cfg.HTTP.Enabled = false
	cfg.System.Path = dir
	cfg.Heartbeat.Enabled = false
	opts := []broker.Option{
		broker.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		broker.WithPasswordParams(TestPasswordParams),
		broker.WithRootCredentials(RootUsername, RootPassword),
	}
	switch mode {
	case childMetadata:
		opts = append(opts, broker.WithSnapshotEvery(7))
	case childCatalog:
		opts = append(opts, broker.WithTopics(func(d catalog.Data) catalog.Topics {
			c := catalogtest.New(d)
			// Same incarnation on every start: the broker recovers it.
			if _, err := c.AddTopic(1, "s1", 1, "t1", 2, 1, crashSettings()); err != nil {
				fmt.Fprintln(os.Stderr, "add topic:", err)
			}
			return c
		}))
	default:
		fmt.Fprintln(os.Stderr, "unknown child mode", mode)
		return 2
	}
	b, err := broker.New(cfg, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "broker:", err)
		return 1
	}
	fmt.Printf("ADDR %s\n", b.Addr())
	if err := b.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		return 1
	}
	return 0
}

// child is a broker process.
type child struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bytes.Buffer
}

// startChild re-executes the test binary as a broker of the given mode on
// dir and waits until it listens.
func startChild(t *testing.T, dir, mode string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childModeEnv+"="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child broker did not start (%q, %v): %s", line, err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	// A test that fails (t.Fatal) between start and kill must not leave
	// the broker running after it.
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &child{cmd: cmd, addr: strings.TrimSpace(strings.TrimPrefix(line, "ADDR ")), stderr: &stderr}
}

// kill SIGKILLs the process and reaps it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()
}
