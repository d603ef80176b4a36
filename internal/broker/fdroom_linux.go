package broker

import (
	"os"
	"syscall"
)

// processFileLimit counts /proc/self/fd and reads RLIMIT_NOFILE.
func processFileLimit() (open, limit int, ok bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, false
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, 0, false
	}
	return len(names), int(min(rl.Cur, 1<<31)), true
}
