//go:build windows

package filestore

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive LockFileEx lock on f (the whole file), waiting
// for it: the same semantics as flock(2)'s LOCK_EX, a lock that dies with
// its handle, so a killed holder releases it.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, ^uint32(0), ^uint32(0), &ol)
}

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) {
	var ol windows.Overlapped
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, ^uint32(0), ^uint32(0), &ol)
}

// removeLockedFirst: Windows refuses to remove a file that any handle has
// open (Go opens files without FILE_SHARE_DELETE), so a lock file is
// removed after its lock is released and its handle closed: the removal
// fails, harmlessly, while another locker has it open, and a locker that
// opens the name afterwards creates a new file (the identity check in lock
// covers a removal between its open and its lock).
const removeLockedFirst = false

// isNoSpace reports whether err is a full disk or quota.
func isNoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL) ||
		errors.Is(err, windows.ERROR_DISK_QUOTA_EXCEEDED)
}

// isNotDir reports whether err is a path through a regular file (Windows
// reports ERROR_PATH_NOT_FOUND, which is already fs.ErrNotExist).
func isNotDir(err error) bool { return errors.Is(err, windows.ERROR_DIRECTORY) }

// sharing reports whether err is Windows refusing an operation on a file
// that another handle holds open (a reader of the old version).
func sharing(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// retryShared runs op until it does not fail with a sharing violation, for
// about two seconds: Windows refuses to replace or remove a file that a
// reader has open, and readers of the files pswap replaces (pointers,
// table.json, metadata) hold them for one read.
func retryShared(op func() error) error {
	delay := time.Millisecond
	for i := 0; ; i++ {
		err := op()
		if err == nil || !sharing(err) || i == 12 {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, 250*time.Millisecond)
	}
}

// replaceFile renames tmp over dst (MoveFileEx with MOVEFILE_REPLACE_EXISTING:
// atomic on NTFS), retrying while a reader holds dst open.
func replaceFile(tmp, dst string) error {
	return retryShared(func() error { return os.Rename(tmp, dst) })
}

// removeFile removes a file, retrying while a reader holds it open.
func removeFile(name string) error { return retryShared(func() error { return os.Remove(name) }) }
