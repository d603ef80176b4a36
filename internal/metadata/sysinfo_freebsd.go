package metadata

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// memSysctl names the sysctl holding the physical memory in bytes.
const memSysctl = "hw.physmem"

// osVersion is "FreeBSD" and the release (kern.osrelease).
func osVersion() string {
	v, err := unix.Sysctl("kern.osrelease")
	if err != nil || v == "" {
		return "FreeBSD"
	}
	return "FreeBSD " + v
}

// cpuStates is CPUSTATES: user, nice, system, interrupt, idle.
const cpuStates = 5

// systemCPU returns busy and total ticks from kern.cp_time (an array of
// CPUSTATES C longs, summed over all CPUs; idle is the last state).
func systemCPU() (busy, total uint64) {
	b, err := unix.SysctlRaw("kern.cp_time")
	if err != nil {
		return 0, 0
	}
	width := len(b) / cpuStates
	if len(b)%cpuStates != 0 || (width != 4 && width != 8) {
		return 0, 0
	}
	for i := range cpuStates {
		var n uint64
		if width == 8 {
			n = binary.NativeEndian.Uint64(b[i*8:])
		} else {
			n = uint64(binary.NativeEndian.Uint32(b[i*4:]))
		}
		total += n
		if i != cpuStates-1 {
			busy += n
		}
	}
	return busy, total
}
