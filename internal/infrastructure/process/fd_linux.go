package process

import (
	"math"
	"syscall"

	"golang.org/x/sys/unix"
)

// dupTo makes newfd a copy of oldfd (dup3), closed on exec when cloexec is set.
func dupTo(oldfd, newfd int, cloexec bool) error {
	flags := 0
	if cloexec {
		flags = unix.O_CLOEXEC
	}
	return unix.Dup3(oldfd, newfd, flags)
}

// closeOnExecFrom marks every descriptor from first up close-on-exec, so that commands a
// script runs inherit neither the wire nor what awf itself inherited without the flag.
func closeOnExecFrom(first int) {
	if unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) != nil {
		syscall.CloseOnExec(requestFD) // kernels before 5.11: the wire at least
		syscall.CloseOnExec(statusFD)
	}
}
