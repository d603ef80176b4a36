package metadata

import (
	"fmt"
	"time"

	"golang.org/x/sys/windows"

	"github.com/iggo-dev/iggo/wire"
)

// fillHost adds the host figures GET_STATS reports on Windows: disk space
// of the data directory's volume (GetDiskFreeSpaceEx) and the kernel and
// OS versions (RtlGetVersion). Memory, process I/O and thread figures need
// calls x/sys/windows does not wrap and stay 0 (or their portable
// defaults).
func fillHost(st *wire.Stats, dataDir string) {
	if p, err := windows.UTF16PtrFromString(dataDir); err == nil {
		var avail, total, free uint64
		if windows.GetDiskFreeSpaceEx(p, &avail, &total, &free) == nil {
			st.FreeDiskSpace, st.TotalDiskSpace = avail, total
		}
	}
	v := windows.RtlGetVersion()
	st.KernelVersion = fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
	st.OSVersion = "Windows " + st.KernelVersion
}

// processCPU is the CPU time (user + kernel) the process has used.
func processCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	return filetimeDuration(kernel) + filetimeDuration(user)
}

// filetimeDuration reads a FILETIME holding an interval (100 ns units).
func filetimeDuration(ft windows.Filetime) time.Duration {
	return time.Duration(uint64(ft.HighDateTime)<<32|uint64(ft.LowDateTime)) * 100
}

// systemCPU reports no whole-machine CPU figures on Windows
// (GetSystemTimes is not wrapped by x/sys/windows), so total CPU usage
// stays 0 there.
func systemCPU() (busy, total uint64) { return 0, 0 }
