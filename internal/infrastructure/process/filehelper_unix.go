//go:build unix

package process

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errFDsTaken means fds 3 and 4 were not both free: the helper cannot be exec'd in place.
var errFDsTaken = errors.New("fds 3 and 4 are in use")

// execFileHelper opens the request on fd 3 and the status file on fd 4 (and stdin on fd 0)
// with raw system calls, so the Go runtime's poller never sees them, then replaces the process
// with the helper. It returns only on failure, having closed what it opened.
func execFileHelper(requestPath, statusPath string, stdinPath []string) error {
	if fdInUse(requestFD) || fdInUse(statusFD) {
		return errFDsTaken
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	req, err := unix.Open(requestPath, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	status, err := unix.Open(statusPath, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o600)
	if err != nil || req != requestFD || status != statusFD { // something else took 3 or 4 meanwhile
		unix.Close(req)
		if err == nil {
			unix.Close(status)
		}
		return errFDsTaken
	}
	if len(stdinPath) == 1 {
		in, err := unix.Open(stdinPath[0], unix.O_RDONLY, 0)
		if err == nil {
			err = dupTo(in, 0, false)
			unix.Close(in)
		}
		if err != nil {
			unix.Close(req)
			unix.Close(status)
			return err
		}
	}
	err = syscall.Exec(self, []string{self, HelperArg}, helperEnv())
	unix.Close(req)
	unix.Close(status)
	return err
}

// fdInUse reports whether fd is open in this process.
func fdInUse(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}
