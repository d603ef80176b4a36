// Package systemd speaks the sd_notify protocol without cgo: datagrams
// of newline-separated VAR=value assignments sent to the unix socket
// named by $NOTIFY_SOCKET (a path, or an abstract socket written with a
// leading '@'), plus the watchdog keep-alive at half of $WATCHDOG_USEC
// when $WATCHDOG_PID is unset or names this process (ops.md §7).
//
// Outside systemd (no NOTIFY_SOCKET) every call is a no-op.
package systemd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables systemd sets for a service.
const (
	EnvNotifySocket = "NOTIFY_SOCKET"
	EnvWatchdogUsec = "WATCHDOG_USEC"
	EnvWatchdogPID  = "WATCHDOG_PID"
)

// maxStatusBytes bounds a STATUS= text; systemd shows one line.
const maxStatusBytes = 1024

// Notifier sends state changes to the service manager. The zero value
// and a nil *Notifier do nothing.
type Notifier struct {
	addr     *net.UnixAddr
	watchdog time.Duration // 0: no watchdog

	mu   sync.Mutex
	conn *net.UnixConn // guarded by mu; dialled on first use
}

// New reads the notify socket and the watchdog settings from environ
// ("KEY=value" strings) for process pid. It returns nil when
// NOTIFY_SOCKET is unset, and an error when a variable is malformed.
func New(environ []string, pid int) (*Notifier, error) {
	sock := lookup(environ, EnvNotifySocket)
	if sock == "" {
		return nil, nil
	}
	if !strings.HasPrefix(sock, "/") && !strings.HasPrefix(sock, "@") {
		return nil, fmt.Errorf("%s=%q: want an absolute path or an @abstract name", EnvNotifySocket, sock)
	}
	n := &Notifier{addr: &net.UnixAddr{Name: sock, Net: "unixgram"}}
	if us := lookup(environ, EnvWatchdogUsec); us != "" {
		v, err := strconv.ParseUint(us, 10, 63)
		if err != nil || v == 0 {
			return nil, fmt.Errorf("%s=%q: want a positive number of microseconds", EnvWatchdogUsec, us)
		}
		forUs := true
		if p := lookup(environ, EnvWatchdogPID); p != "" {
			wp, err := strconv.Atoi(p)
			if err != nil {
				return nil, fmt.Errorf("%s=%q: want a process id", EnvWatchdogPID, p)
			}
			forUs = wp == pid
		}
		if forUs {
			n.watchdog = time.Duration(v) * time.Microsecond
		}
	}
	return n, nil
}

func lookup(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Send delivers one datagram of state assignments, e.g. "READY=1".
func (n *Notifier) Send(state string) error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		c, err := net.DialUnix("unixgram", nil, n.addr)
		if err != nil {
			return fmt.Errorf("sd_notify: connect %s: %w", n.addr.Name, err)
		}
		n.conn = c
	}
	if _, err := n.conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify: send: %w", err)
	}
	return nil
}

// Ready reports that the service accepts clients, with a status line.
func (n *Notifier) Ready(status string) error {
	return n.Send("READY=1\nSTATUS=" + oneLine(status))
}

// Status sets the status line systemctl status shows.
func (n *Notifier) Status(status string) error { return n.Send("STATUS=" + oneLine(status)) }

// Stopping reports that shutdown has begun, with a status line.
func (n *Notifier) Stopping(status string) error {
	return n.Send("STOPPING=1\nSTATUS=" + oneLine(status))
}

// oneLine keeps a status to one bounded line (a newline would start a
// new assignment).
func oneLine(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	if len(s) > maxStatusBytes {
		s = s[:maxStatusBytes]
	}
	return s
}

// WatchdogInterval is how often Watchdog pings: half of WATCHDOG_USEC,
// or 0 when the watchdog is off for this process.
func (n *Notifier) WatchdogInterval() time.Duration {
	if n == nil {
		return 0
	}
	return n.watchdog / 2
}

// Watchdog sends WATCHDOG=1 at once and then every WatchdogInterval until
// ctx ends. It returns at once when the watchdog is off. Send errors are
// passed to onErr (which may be nil) and do not stop the pings.
func (n *Notifier) Watchdog(ctx context.Context, onErr func(error)) {
	every := n.WatchdogInterval()
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := n.Send("WATCHDOG=1"); err != nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close releases the socket.
func (n *Notifier) Close() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return nil
	}
	err := n.conn.Close()
	n.conn = nil
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("sd_notify: close: %w", err)
	}
	return nil
}
