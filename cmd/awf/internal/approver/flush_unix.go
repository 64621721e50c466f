//go:build linux || darwin

package approver

import (
	"io"
	"os"
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
	if err := rc.Control(func(fd uintptr) { flushErr = flushQueue(int(fd)) }); err != nil {
		return false
	}
	return flushErr == nil
}
