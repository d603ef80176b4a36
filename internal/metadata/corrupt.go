package metadata

// CorruptError is a metadata file that failed verification when the store
// opened (a journal record whose checksum or contents are wrong, ops out
// of sequence, or a damaged snapshot nothing else can stand in for). The
// store does not start on it: the operator restores the metadata
// directory from a backup or starts with empty metadata (docs/OPERATIONS.md,
// "Damaged metadata"). errors.Is(err, ErrCorrupt) holds.
type CorruptError struct {
	// File is the damaged file, or the metadata directory when what is
	// wrong is a file that is missing.
	File string
	// Detail says what failed verification, on one line.
	Detail string
}

// Error implements error.
func (e *CorruptError) Error() string {
	return "metadata file " + e.File + " is damaged: " + e.Detail + "; refusing to start"
}

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
