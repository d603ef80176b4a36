//go:build darwin || freebsd

package metadata

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/iggo-dev/iggo/wire"
)

// fillHost adds the host figures GET_STATS reports on macOS and FreeBSD:
// disk space of the data directory's volume (statfs), total memory and the
// kernel and OS versions (sysctl, uname). Available memory and process I/O
// bytes have no cheap equivalent of Linux's /proc figures here and stay 0
// (chosen: the free page count alone would understate what is available).
func fillHost(st *wire.Stats, dataDir string) {
	var fs unix.Statfs_t
	if unix.Statfs(dataDir, &fs) == nil {
		st.FreeDiskSpace = uint64(max(fs.Bavail, 0)) * uint64(fs.Bsize)
		st.TotalDiskSpace = fs.Blocks * uint64(fs.Bsize)
	}
	if m, err := unix.SysctlUint64(memSysctl); err == nil {
		st.TotalMemory = m
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		st.KernelVersion = unix.ByteSliceToString(u.Release[:])
	}
	st.OSVersion = osVersion()
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
