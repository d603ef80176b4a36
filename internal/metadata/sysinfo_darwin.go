package metadata

import "golang.org/x/sys/unix"

// memSysctl names the sysctl holding the physical memory in bytes.
const memSysctl = "hw.memsize"

// osVersion is "macOS" and the product version (kern.osproductversion).
func osVersion() string {
	v, err := unix.Sysctl("kern.osproductversion")
	if err != nil || v == "" {
		return "macOS"
	}
	return "macOS " + v
}

// systemCPU reports no whole-machine CPU figures on macOS: they need the
// Mach host_statistics call, which x/sys does not wrap, so total CPU usage
// stays 0 there.
func systemCPU() (busy, total uint64) { return 0, 0 }
