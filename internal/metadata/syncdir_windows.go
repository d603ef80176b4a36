package metadata

// syncDir does nothing on Windows: a directory cannot be opened with the
// write access FlushFileBuffers needs, so os.File.Sync on it fails. NTFS
// journals creates and renames itself; that such a name change is on disk
// when the call returns is what Windows does not promise (file contents
// are synced). The same choice as internal/storage (docs/DESIGN.md,
// "Platforms").
func syncDir(string) error { return nil }
