//go:build unix

package jsonl

import (
	"os"
	"syscall"
)

// lockAppends holds an exclusive flock on f while a line is checked for and written, so that
// the writers of awf, each holding it in turn, never read another's line half written; nil
// when the lock cannot be had (then the check may, rarely, start a line early: a blank line
// that readers skip). A writer killed holding it releases it with its descriptor.
func lockAppends(f *os.File) (unlock func()) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err == nil {
			return func() { syscall.Flock(fd, syscall.LOCK_UN) }
		}
		if err != syscall.EINTR {
			return nil
		}
	}
}
