//go:build !linux

package bench

import "time"

// processCPU, processMemory and openFiles read /proc, which only Linux
// has; elsewhere they report nothing and the result leaves the figures
// out.
func processCPU(pid int) (time.Duration, bool) { return 0, false }

func processMemory(pid int) (rss uint64, threads int, ok bool) { return 0, 0, false }

func openFiles(pid int) (int, bool) { return 0, false }
