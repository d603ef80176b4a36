package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/iggo-dev/iggo/internal/config"
)

// serverPreflight checks, before `iggo server` creates, removes (--fresh)
// or logs anything, what most often stops a start: a listen address that
// is in use or cannot be bound, and a data directory that cannot be
// created or written. A start that fails here leaves no logs/ or
// metadata/ behind and reports the one real cause. Addresses with port 0
// always bind and are not checked; the replication addresses of cluster
// mode are left to the start itself.
func serverPreflight(cfg *config.Config) error {
	type listener struct {
		enabled       bool
		network, key  string
		address, name string
	}
	for _, l := range []listener{
		{cfg.TCP.Enabled, "tcp", "tcp.address", cfg.TCP.Address, "TCP"},
		{cfg.QUIC.Enabled, "udp", "quic.address", cfg.QUIC.Address, "QUIC"},
		{cfg.WebSocket.Enabled, "tcp", "websocket.address", cfg.WebSocket.Address, "WebSocket"},
		{cfg.HTTP.Enabled, "tcp", "http.address", cfg.HTTP.Address, "HTTP"},
	} {
		if !l.enabled || strings.HasSuffix(l.address, ":0") {
			continue
		}
		if err := tryListen(l.network, l.address); err != nil {
			return fmt.Errorf("cannot listen for %s on %s (%s): %w", l.name, l.address, l.key, err)
		}
	}
	if err := checkDataDir(cfg.System.Path); err != nil {
		return fmt.Errorf("data directory %s (system.path): %w", cfg.System.Path, err)
	}
	return nil
}

// tryListen binds address and closes it at once.
func tryListen(network, address string) error {
	if network == "udp" {
		pc, err := net.ListenPacket(network, address)
		if err != nil {
			return unwrapOp(err)
		}
		return pc.Close()
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		return unwrapOp(err)
	}
	return ln.Close()
}

// unwrapOp drops the "listen tcp ADDR:" prefix the caller already says.
func unwrapOp(err error) error {
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Err != nil {
		return op.Err
	}
	return err
}

// checkDataDir checks that dir is a writable directory or can be created
// (its nearest existing ancestor is a writable directory), creating
// nothing but a probe file it removes at once.
func checkDataDir(dir string) error {
	p := filepath.Clean(dir)
	for {
		st, err := os.Stat(p)
		switch {
		case err == nil && !st.IsDir():
			if p == filepath.Clean(dir) {
				return fmt.Errorf("it is not a directory")
			}
			return fmt.Errorf("%s is not a directory", p)
		case err == nil:
			return probeWrite(p)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return err
		}
		p = parent
	}
}

// probeWrite creates and removes a file in dir.
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".iggo-write-check-*")
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			return fmt.Errorf("%s is not writable: %w", dir, pe.Err)
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
