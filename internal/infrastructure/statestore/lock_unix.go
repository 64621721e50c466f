//go:build unix

package statestore

import (
	"errors"
	"os"
	"syscall"

	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// lockFile locks f exclusively without waiting (flock), or returns errLocked.
func lockFile(f *os.File) error {
	return flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
}

// heldByAnyone reports whether some process holds the lock file at p. It takes a shared
// lock for a moment: granted, nobody holds the exclusive one.
func heldByAnyone(p string) bool {
	f, err := regfile.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(flock(f, syscall.LOCK_SH|syscall.LOCK_NB), errLocked)
}

// flock applies how to f.
func flock(f *os.File, how int) error {
	err := fileCall(f, "flock", func(fd int) error { return syscall.Flock(fd, how) })
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// fileCall calls the system call call on f's descriptor, again when a signal interrupts it;
// its error is an *os.PathError naming op and the file.
func fileCall(f *os.File, op string, call func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			cerr = call(int(fd))
			if !errors.Is(cerr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if cerr != nil {
		return &os.PathError{Op: op, Path: f.Name(), Err: cerr}
	}
	return nil
}
