package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// BaselineBufferSize is the write and read size of the loopback copy:
// one batch of 1000 messages of 1000 bytes, the default workload.
const BaselineBufferSize = 1 << 20

// MeasureLoopback measures what the machine's loopback TCP carries: one
// goroutine writes BaselineBufferSize chunks to a 127.0.0.1 connection
// for d, another reads and discards them. The figure is the bytes read
// over the time from the first write to the reader seeing the end of the
// stream. It is the ceiling for any single-connection figure of the
// broker on this machine (which also parses, checksums and stores).
func MeasureLoopback(ctx context.Context, d time.Duration) (*Baseline, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("baseline: listen: %w", err)
	}
	defer ln.Close()
	type readResult struct {
		n   uint64
		end time.Time
		err error
	}
	got := make(chan readResult, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- readResult{err: err}
			return
		}
		defer c.Close()
		buf := make([]byte, BaselineBufferSize)
		var n uint64
		for {
			k, err := c.Read(buf)
			n += uint64(k)
			if errors.Is(err, io.EOF) {
				got <- readResult{n: n, end: time.Now()}
				return
			}
			if err != nil {
				got <- readResult{err: err}
				return
			}
		}
	}()
	var d0 net.Dialer
	c, err := d0.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("baseline: dial: %w", err)
	}
	tc := c.(*net.TCPConn)
	buf := make([]byte, BaselineBufferSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	start := time.Now()
	deadline := start.Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if _, err := tc.Write(buf); err != nil {
			tc.Close()
			return nil, fmt.Errorf("baseline: write: %w", err)
		}
	}
	if err := tc.CloseWrite(); err != nil {
		tc.Close()
		return nil, fmt.Errorf("baseline: close: %w", err)
	}
	r := <-got
	tc.Close()
	if r.err != nil {
		return nil, fmt.Errorf("baseline: read: %w", r.err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	secs := r.end.Sub(start).Seconds()
	return &Baseline{Seconds: secs, Bytes: r.n, BufferSize: BaselineBufferSize, MBps: float64(r.n) / secs / MB}, nil
}
