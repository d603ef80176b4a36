package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// Profiling a running server, for performance work: IGGO_CPU_PROFILE=path
// writes a CPU profile and IGGO_TRACE=path an execution trace (go tool
// pprof, go tool trace) to path.<pid> from start-up until the server
// stops. The pid suffix keeps the files of the nodes of a local cluster
// (`iggo cluster start`, which passes its environment on) apart.
const (
	envCPUProfile = "IGGO_CPU_PROFILE"
	envTrace      = "IGGO_TRACE"
)

// startProfiles starts what the environment asks for and returns the
// function that stops and closes everything.
func startProfiles(environ []string) (func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if path := lookup(environ, envCPUProfile); path != "" {
		f, err := createProfile(path)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", envCPUProfile, err), f.Close())
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); _ = f.Close() })
	}
	if path := lookup(environ, envTrace); path != "" {
		f, err := createProfile(path)
		if err != nil {
			stop()
			return nil, err
		}
		if err := trace.Start(f); err != nil {
			stop()
			return nil, errors.Join(fmt.Errorf("%s: %w", envTrace, err), f.Close())
		}
		stops = append(stops, func() { trace.Stop(); _ = f.Close() })
	}
	return stop, nil
}

func createProfile(path string) (*os.File, error) {
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("profile output: %w", err)
	}
	return f, nil
}
