//go:build !windows

package filestore

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock(2) on f, waiting for it.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// removeLockedFirst: on Unix a lock file is unlinked while its lock is
// held (Delete), so that no new locker can open the old name meanwhile;
// lockers already waiting on the unlinked file see that the name moved.
const removeLockedFirst = true

// isNoSpace reports whether err is a full disk or quota.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// isNotDir reports whether err is a path through a regular file.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// replaceFile renames tmp over dst (rename(2) replaces it atomically).
func replaceFile(tmp, dst string) error { return os.Rename(tmp, dst) }

// removeFile removes a file.
func removeFile(name string) error { return os.Remove(name) }
