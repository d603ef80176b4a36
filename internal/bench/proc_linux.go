package bench

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// processCPU returns the user plus system CPU time pid has used.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may contain spaces; fields after it
	// start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * time.Second / clockTicks, true
}

// processMemory returns the resident set size and the thread count of pid.
func processMemory(pid int) (rss uint64, threads int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		k, v, found := bytes.Cut(line, []byte{':'})
		if !found {
			continue
		}
		f := bytes.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch string(k) {
		case "VmRSS":
			kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
			rss = kb << 10
		case "Threads":
			threads, _ = strconv.Atoi(string(f[0]))
		}
	}
	return rss, threads, true
}

// openFiles counts the open file descriptors of pid.
func openFiles(pid int) (int, bool) {
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, false
	}
	return len(names), true
}
