package bench

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncName names the call the disk baseline makes after each write.
const syncName = "fdatasync"

// syncData is fdatasync(2), as the broker's storage syncs a segment.
func syncData(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
