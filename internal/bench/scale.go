package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// ScaleConfig is one run of `iggo bench scale`: many partitions and many
// idle connections on a broker at Addr, and what the broker costs while
// nothing happens.
type ScaleConfig struct {
	Addr               string
	Username, Password string
	// Prefix names the streams PREFIX-1..Streams, each with topics t-1..
	// TopicsPerStream of PartitionsPerTopic partitions. With Create the
	// streams are (re)created; without, they are expected to exist (a
	// restarted broker).
	Prefix                                       string
	Streams, TopicsPerStream, PartitionsPerTopic int
	Create                                       bool
	// Clients is the number of connections logged in (with a personal
	// access token, so the broker spends no Argon2 time on them) and kept
	// idle during the measurement.
	Clients int
	// Idle is how long the broker is observed with nothing to do.
	Idle time.Duration
	// Remove deletes the streams at the end.
	Remove bool
	// Output, when set, receives the result as JSON.
	Output string
	// Progress receives a line per step; nil for none.
	Progress io.Writer
}

// ScaleResult is what `iggo bench scale` measured.
type ScaleResult struct {
	StartedAt time.Time `json:"started_at"`
	Env       Env       `json:"environment"`
	Server    string    `json:"server"`
	// Ready is the time from the first dial attempt to the first answered
	// request: the start-up time when the broker was (re)started just
	// before.
	ReadySeconds float64 `json:"ready_seconds"`
	// CreateSeconds is the time to create the streams, topics and
	// partitions (0 without Create).
	CreateSeconds float64 `json:"create_seconds,omitempty"`
	// ConnectSeconds is the time to open and log in every client.
	ConnectSeconds float64 `json:"connect_seconds,omitempty"`
	Clients        int     `json:"clients"`
	// Streams, Topics, Partitions and ServerClients are the broker's own
	// counts (GET_STATS) during the idle phase.
	Streams       uint32 `json:"streams"`
	Topics        uint32 `json:"topics"`
	Partitions    uint32 `json:"partitions"`
	ServerClients uint32 `json:"server_clients"`
	// Idle is the observation with nothing to do.
	IdleSeconds float64 `json:"idle_seconds"`
	// IdleCPUSeconds is the broker's CPU time over the idle phase and
	// IdleCPUPercent that as a share of one CPU; nil process figures mean
	// the broker is not a process of this machine.
	IdleCPUSeconds float64          `json:"idle_cpu_seconds"`
	IdleCPUPercent float64          `json:"idle_cpu_percent"`
	Process        *ProcessInfo     `json:"process,omitempty"`
	Before         *ResourceSample  `json:"before_idle,omitempty"`
	After          *ResourceSample  `json:"after_idle,omitempty"`
	Samples        []ResourceSample `json:"samples,omitempty"`
	// MemoryUsage is the broker's own memory figure (GET_STATS
	// memory_usage) after the idle phase.
	MemoryUsage uint64 `json:"server_memory_usage"`
}

// readyTimeout bounds the wait for a (re)starting broker to answer.
const readyTimeout = 10 * time.Minute

// RunScale runs the scale measurement.
func RunScale(ctx context.Context, cfg ScaleConfig) (*ScaleResult, error) {
	res := &ScaleResult{StartedAt: time.Now().UTC(), Env: currentEnv(), Server: cfg.Addr, Clients: cfg.Clients}
	say := func(format string, a ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", a...)
		}
	}
	t := &target{addr: cfg.Addr, label: cfg.Addr}
	bc := &Config{Username: cfg.Username, Password: cfg.Password}
	start := time.Now()
	var admin *client.Client
	for {
		c, err := t.dial(ctx, bc)
		if err == nil {
			if _, err = c.GetStats(ctx); err == nil {
				admin = c
				break
			}
			c.Close()
		}
		if time.Since(start) > readyTimeout || ctx.Err() != nil {
			return nil, fmt.Errorf("broker not ready after %v: %w", time.Since(start).Round(time.Second), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer admin.Close()
	res.ReadySeconds = time.Since(start).Seconds()
	say("broker answered after %.2fs", res.ReadySeconds)
	if cfg.Create {
		t0 := time.Now()
		if err := createScale(ctx, admin, &cfg); err != nil {
			return nil, err
		}
		res.CreateSeconds = time.Since(t0).Seconds()
		say("created %d streams × %d topics × %d partitions in %.1fs", cfg.Streams, cfg.TopicsPerStream, cfg.PartitionsPerTopic, res.CreateSeconds)
	}
	clients, err := connectScale(ctx, admin, t, &cfg, res)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	if cfg.Clients > 0 {
		say("%d clients logged in in %.1fs", len(clients), res.ConnectSeconds)
	}
	res.Process = findProcess(ctx, t, admin)
	if res.Process != nil {
		s := sampleProcess(res.Process, 0)
		res.Before = &s
	}
	say("observing the idle broker for %v", cfg.Idle)
	rs := startResources(res.Process, time.Now(), min(max(cfg.Idle/30, time.Second), 10*time.Second))
	t0 := time.Now()
	if err := sleepCtx(ctx, cfg.Idle); err != nil {
		rs.stop()
		return nil, err
	}
	res.IdleSeconds = time.Since(t0).Seconds()
	res.Samples = rs.stop()
	if res.Process != nil {
		s := sampleProcess(res.Process, res.IdleSeconds)
		res.After = &s
		res.IdleCPUSeconds = s.CPUSeconds - res.Before.CPUSeconds
		res.IdleCPUPercent = 100 * res.IdleCPUSeconds / res.IdleSeconds
	}
	st, err := admin.GetStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("read stats: %w", err)
	}
	res.Streams, res.Topics, res.Partitions, res.ServerClients, res.MemoryUsage = st.StreamsCount, st.TopicsCount, st.PartitionsCount, st.ClientsCount, st.MemoryUsage
	if cfg.Remove {
		for i := 1; i <= cfg.Streams; i++ {
			admin.DeleteStream(ctx, wire.NamedID(fmt.Sprintf("%s-%d", cfg.Prefix, i)))
		}
	}
	if cfg.Output != "" {
		if err := os.MkdirAll(filepath.Dir(cfg.Output), 0o755); err != nil {
			return nil, fmt.Errorf("create output directory: %w", err)
		}
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		if err := os.WriteFile(cfg.Output, append(data, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("write result: %w", err)
		}
	}
	return res, nil
}

// createScale (re)creates the streams, topics and partitions.
func createScale(ctx context.Context, admin *client.Client, cfg *ScaleConfig) error {
	for i := 1; i <= cfg.Streams; i++ {
		name := fmt.Sprintf("%s-%d", cfg.Prefix, i)
		if _, err := admin.GetStream(ctx, wire.NamedID(name)); err == nil {
			if err := admin.DeleteStream(ctx, wire.NamedID(name)); err != nil {
				return fmt.Errorf("delete old stream %s: %w", name, err)
			}
		} else if !errors.Is(err, wire.ErrStreamIDNotFound) {
			return fmt.Errorf("look up stream %s: %w", name, err)
		}
		sd, err := admin.CreateStream(ctx, name)
		if err != nil {
			return fmt.Errorf("create stream %s: %w", name, err)
		}
		for j := 1; j <= cfg.TopicsPerStream; j++ {
			if _, err := admin.CreateTopic(ctx, wire.NumericID(sd.ID), fmt.Sprintf("t-%d", j), uint32(cfg.PartitionsPerTopic)); err != nil {
				return fmt.Errorf("create topic %d in %s: %w", j, name, err)
			}
		}
	}
	return nil
}

// scaleDialers bounds the connections opened at once; dialTimeout bounds
// one connection and its login.
const (
	scaleDialers = 16
	dialTimeout  = time.Minute
)

// connectScale opens cfg.Clients connections logged in with a personal
// access token of the admin user.
func connectScale(ctx context.Context, admin *client.Client, t *target, cfg *ScaleConfig, res *ScaleResult) ([]*client.Client, error) {
	if cfg.Clients <= 0 {
		return nil, nil
	}
	name := fmt.Sprintf("%s-bench-%d", cfg.Prefix, time.Now().UnixNano())
	token, err := admin.CreatePersonalAccessToken(ctx, name, time.Hour)
	if err != nil {
		return nil, fmt.Errorf("create a token for the clients: %w", err)
	}
	defer admin.DeletePersonalAccessToken(context.WithoutCancel(ctx), name)
	t0 := time.Now()
	clients := make([]*client.Client, cfg.Clients)
	errs := make([]error, cfg.Clients)
	sem := make(chan struct{}, scaleDialers)
	var wg sync.WaitGroup
	for i := range clients {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			clients[i], errs[i] = client.Dial(dctx, t.addr, client.WithToken(token))
		})
	}
	wg.Wait()
	res.ConnectSeconds = time.Since(t0).Seconds()
	var open []*client.Client
	for _, c := range clients {
		if c != nil {
			open = append(open, c)
		}
	}
	return open, errors.Join(errs...)
}
