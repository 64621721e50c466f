package approver

import "golang.org/x/sys/unix"

// flushQueue discards the terminal fd's input queue: tcflush(TCIFLUSH) is TIOCFLUSH with
// FREAD on macOS.
func flushQueue(fd int) error {
	const fread = 1 // FREAD in <sys/fcntl.h>: the input queue
	return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread)
}
