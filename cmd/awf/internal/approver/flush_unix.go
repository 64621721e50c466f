//go:build unix

package approver

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// flushInput discards what was typed on the terminal r but not read yet (tcflush TCIFLUSH),
// and reports whether r was a terminal it could flush.
func flushInput(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var flushErr error
	if err := rc.Control(func(fd uintptr) {
		flushErr = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH)
	}); err != nil {
		return false
	}
	return flushErr == nil
}
