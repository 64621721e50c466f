package ptytest

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openPTY opens a new pseudo-terminal's master and returns it with the terminal's path.
func openPTY() (*os.File, string, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, "", err
	}
	rc, err := master.SyscallConn()
	if err != nil {
		master.Close()
		return nil, "", err
	}
	var n int
	var ioErr error
	if err := rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr == nil {
			n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}); err != nil || ioErr != nil {
		master.Close()
		return nil, "", fmt.Errorf("unlock pty: %v %v", err, ioErr)
	}
	return master, fmt.Sprintf("/dev/pts/%d", n), nil
}

// openTerm opens the terminal side without making it the controlling terminal.
func openTerm(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY, 0)
}
