//go:build !windows

package storage

import (
	"fmt"
	"os"
)

// syncDir fsyncs a directory so created, renamed or removed entries persist.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
