package metadata

import "errors"

// ErrDiskFull is a metadata write refused because the file system holding
// the metadata directory is out of space. The journal was cut back to its
// last whole record: the operation was not committed and nothing of it was
// applied. Clients get CannotWriteToFile (10006); the store accepts writes
// again as soon as one fits.
var ErrDiskFull = errors.New("metadata: no space left on device")

// reportFullLocked logs the first refused write of a full-disk episode.
// Caller holds wmu.
func (s *Store) reportFullLocked(err error) {
	if s.full {
		return
	}
	s.full = true
	s.log.Error("metadata write refused: disk full; streams, topics, users and logins cannot change until space is freed", "err", err)
}
