package metadata

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// fillHost adds the host figures GET_STATS reports, read from /proc and
// statfs; anything unreadable stays 0 or empty.
func fillHost(st *wire.Stats, dataDir string) {
	if m := readKeyValues("/proc/meminfo"); m != nil {
		st.TotalMemory = m["MemTotal"] * 1024
		st.AvailableMemory = m["MemAvailable"] * 1024
	}
	if io := readKeyValues("/proc/self/io"); io != nil {
		st.ReadBytes, st.WrittenBytes = io["read_bytes"], io["write_bytes"]
	}
	if status := readKeyValues("/proc/self/status"); status != nil && status["Threads"] > 0 {
		st.ThreadsCount = uint32(status["Threads"])
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		st.KernelVersion = strings.TrimSpace(string(b))
	}
	st.OSVersion = osVersion()
	var fs syscall.Statfs_t
	if syscall.Statfs(dataDir, &fs) == nil {
		st.FreeDiskSpace = fs.Bavail * uint64(fs.Bsize)
		st.TotalDiskSpace = fs.Blocks * uint64(fs.Bsize)
	}
}

// readKeyValues parses "key: number [unit]" lines.
func readKeyValues(path string) map[string]uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			out[strings.TrimSpace(k)] = n
		}
	}
	return out
}

// osVersion is PRETTY_NAME of /etc/os-release.
func osVersion() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// systemCPU returns busy and total jiffies from /proc/stat.
func systemCPU() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, s := range f[1:] {
		n, _ := strconv.ParseUint(s, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}
