package approver

import "golang.org/x/sys/unix"

// flushQueue discards the terminal fd's input queue.
func flushQueue(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
