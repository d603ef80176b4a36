//go:build !windows

package metadata

import "os"

// syncDir fsyncs a directory so a created, renamed or removed name is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
