package bench

import (
	"context"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/client"
)

// ProcessInfo says which process the server figures come from.
type ProcessInfo struct {
	// PID is the broker's process id (GET_STATS), or this process's for
	// the embedded broker.
	PID int `json:"pid"`
	// Embedded is set when the broker runs in the benchmark's process:
	// the process figures then cover broker and benchmark together.
	Embedded bool `json:"embedded"`
}

// CPUUse is the CPU time spent during the measured phase.
type CPUUse struct {
	// ServerSeconds is the broker process's user + system CPU time; set
	// when the broker is a separate process on this machine.
	ServerSeconds float64 `json:"server_seconds,omitempty"`
	// ServerPerGB is ServerSeconds per 10^9 payload bytes measured (sent
	// plus received, over all actors).
	ServerPerGB float64 `json:"server_seconds_per_gb,omitempty"`
	// BenchSeconds is this process's CPU time (with an embedded broker,
	// broker included); BenchPerGB per 10^9 payload bytes.
	BenchSeconds float64 `json:"bench_seconds"`
	BenchPerGB   float64 `json:"bench_seconds_per_gb"`
}

// ResourceSample is one look at the broker's process during the measured
// phase. Fields the platform or the setup cannot observe are zero.
type ResourceSample struct {
	// Seconds since the end of the warmup.
	Seconds float64 `json:"t"`
	// RSS is the resident set size in bytes; Threads the OS threads;
	// OpenFiles the open file descriptors.
	RSS       uint64 `json:"rss_bytes"`
	Threads   int    `json:"threads"`
	OpenFiles int    `json:"open_files"`
	// CPUSeconds is the process's CPU time so far.
	CPUSeconds float64 `json:"cpu_seconds"`
	// HeapBytes (Go heap in use) and Goroutines are known only for the
	// embedded broker, where they include the benchmark's own.
	HeapBytes  uint64 `json:"heap_bytes,omitempty"`
	Goroutines int    `json:"goroutines,omitempty"`
}

// findProcess identifies the broker's process: this one for the embedded
// broker, else the process id GET_STATS reports when the address is a
// loopback address and that process is visible here. nil when unknown.
func findProcess(ctx context.Context, t *target, admin *client.Client) *ProcessInfo {
	if t.label == "embedded" {
		return &ProcessInfo{PID: os.Getpid(), Embedded: true}
	}
	host, _, err := net.SplitHostPort(t.addr)
	if err != nil {
		return nil
	}
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		return nil
	}
	st, err := admin.GetStats(ctx)
	if err != nil || st.ProcessID == 0 {
		return nil
	}
	pid := int(st.ProcessID)
	if _, ok := processCPU(pid); !ok || pid == os.Getpid() {
		return nil
	}
	return &ProcessInfo{PID: pid}
}

// cpuMeter measures CPU time over the measured phase.
type cpuMeter struct {
	proc              *ProcessInfo
	server0, bench0   time.Duration
	serverOK, benchOK bool
}

func startCPU(proc *ProcessInfo) *cpuMeter {
	m := &cpuMeter{proc: proc}
	m.bench0, m.benchOK = processCPU(os.Getpid())
	if proc != nil && !proc.Embedded {
		m.server0, m.serverOK = processCPU(proc.PID)
	}
	return m
}

// stop returns the CPU used since start, per 10^9 payload bytes as well;
// nil when nothing could be read.
func (m *cpuMeter) stop(payload uint64) *CPUUse {
	if !m.benchOK {
		return nil
	}
	gb := float64(payload) / 1e9
	per := func(s float64) float64 {
		if gb == 0 {
			return 0
		}
		return s / gb
	}
	u := &CPUUse{}
	if b1, ok := processCPU(os.Getpid()); ok {
		u.BenchSeconds = (b1 - m.bench0).Seconds()
		u.BenchPerGB = per(u.BenchSeconds)
	}
	if m.serverOK {
		if s1, ok := processCPU(m.proc.PID); ok {
			u.ServerSeconds = (s1 - m.server0).Seconds()
			u.ServerPerGB = per(u.ServerSeconds)
		}
	}
	return u
}

// sampleProcess takes one ResourceSample of proc at t seconds.
func sampleProcess(proc *ProcessInfo, t float64) ResourceSample {
	s := ResourceSample{Seconds: t}
	s.RSS, s.Threads, _ = processMemory(proc.PID)
	s.OpenFiles, _ = openFiles(proc.PID)
	if c, ok := processCPU(proc.PID); ok {
		s.CPUSeconds = c.Seconds()
	}
	if proc.Embedded {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.HeapBytes = ms.HeapInuse
		s.Goroutines = runtime.NumGoroutine()
	}
	return s
}

// resourceSampler samples the broker's process every period from start.
type resourceSampler struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	out   []ResourceSample
}

// startResources starts sampling; nil when there is nothing to sample.
func startResources(proc *ProcessInfo, start time.Time, period time.Duration) *resourceSampler {
	if proc == nil || period <= 0 {
		return nil
	}
	rs := &resourceSampler{stopc: make(chan struct{})}
	rs.wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		rs.out = append(rs.out, sampleProcess(proc, time.Since(start).Seconds()))
		for {
			select {
			case <-rs.stopc:
				rs.out = append(rs.out, sampleProcess(proc, time.Since(start).Seconds()))
				return
			case <-t.C:
				rs.out = append(rs.out, sampleProcess(proc, time.Since(start).Seconds()))
			}
		}
	})
	return rs
}

// stop ends sampling and returns the samples.
func (rs *resourceSampler) stop() []ResourceSample {
	if rs == nil {
		return nil
	}
	close(rs.stopc)
	rs.wg.Wait()
	return rs.out
}
