package metadata

import (
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// TestFillHostLinux checks that the Linux host figures are read: memory and
// disk sizes from /proc and statfs, versions, and a growing CPU time.
func TestFillHostLinux(t *testing.T) {
	var st wire.Stats
	fillHost(&st, t.TempDir())
	if st.TotalMemory == 0 || st.AvailableMemory == 0 || st.AvailableMemory > st.TotalMemory {
		t.Errorf("memory total %d available %d", st.TotalMemory, st.AvailableMemory)
	}
	if st.TotalDiskSpace == 0 || st.FreeDiskSpace > st.TotalDiskSpace {
		t.Errorf("disk total %d free %d", st.TotalDiskSpace, st.FreeDiskSpace)
	}
	if st.KernelVersion == "" {
		t.Error("no kernel version")
	}
	if processCPU() <= 0 {
		t.Error("no process CPU time")
	}
	if busy, total := systemCPU(); total == 0 || busy > total {
		t.Errorf("system CPU busy %d total %d", busy, total)
	}
}
