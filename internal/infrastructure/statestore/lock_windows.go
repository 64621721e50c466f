//go:build windows

package statestore

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"

	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// lockFile locks f exclusively without waiting (LockFileEx), or returns errLocked.
func lockFile(f *os.File) error {
	return lockEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
}

// heldByAnyone reports whether some process holds the lock file at p, by taking a shared
// lock for a moment.
func heldByAnyone(p string) bool {
	f, err := regfile.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(lockEx(f, windows.LOCKFILE_FAIL_IMMEDIATELY), errLocked)
}

// lockEx locks one byte of f far past its end: Windows locks are mandatory, and a lock over
// the owner's pid and host would keep others from reading them.
func lockEx(f *os.File, flags uint32) error {
	ol := &windows.Overlapped{OffsetHigh: 1}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLocked
	}
	if err != nil {
		return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
	}
	return nil
}
