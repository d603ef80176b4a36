package storage

import (
	"fmt"
	"os"
	"syscall"
)

// openFlags are the os.OpenFile flags openFile understands.
const openFlags = os.O_RDONLY | os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC

// openFile opens a segment file with FILE_SHARE_DELETE, which os.OpenFile
// does not pass on Windows. Without it a segment could not be removed while
// it is open, and retention and purge remove segments that the partition
// and pinned readers still hold (Unix semantics: the name goes, the open
// handles keep working). Where the file system supports POSIX delete
// semantics (NTFS on current Windows) the name disappears at once; elsewhere
// it lingers as "delete pending" until the last handle closes, and creating
// a file of the same name fails until then.
//
// Only O_RDONLY, O_WRONLY, O_RDWR, O_CREATE and O_TRUNC are supported; perm
// is ignored (files get normal attributes, as os.OpenFile gives them for a
// writable perm). The handle is not inherited by child processes.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	if flag&^openFlags != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("unsupported open flags %#x", flag&^openFlags)}
	}
	name, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	access := uint32(syscall.GENERIC_READ)
	switch flag & (os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		access = syscall.GENERIC_WRITE
	case os.O_RDWR:
		access |= syscall.GENERIC_WRITE
	}
	var mode uint32
	switch {
	case flag&os.O_CREATE != 0 && flag&os.O_TRUNC != 0:
		mode = syscall.CREATE_ALWAYS
	case flag&os.O_CREATE != 0:
		mode = syscall.OPEN_ALWAYS
	case flag&os.O_TRUNC != 0:
		mode = syscall.TRUNCATE_EXISTING
	default:
		mode = syscall.OPEN_EXISTING
	}
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		access |= syscall.GENERIC_WRITE
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	h, err := syscall.CreateFile(name, access, share, nil, mode, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
