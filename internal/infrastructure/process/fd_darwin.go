package process

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// dupTo makes newfd a copy of oldfd (dup2, then the flag: macOS has no dup3), closed on exec
// when cloexec is set.
func dupTo(oldfd, newfd int, cloexec bool) error {
	if err := unix.Dup2(oldfd, newfd); err != nil {
		return err
	}
	if cloexec {
		syscall.CloseOnExec(newfd)
	}
	return nil
}

// closeOnExecFrom marks every descriptor from first up close-on-exec, so that commands a
// script runs inherit neither the wire nor what awf itself inherited without the flag. macOS
// has no close_range: the open descriptors are listed from /dev/fd; when that fails, the wire
// at least is marked.
func closeOnExecFrom(first int) {
	syscall.CloseOnExec(requestFD)
	syscall.CloseOnExec(statusFD)
	entries, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
			syscall.CloseOnExec(fd)
		}
	}
}
