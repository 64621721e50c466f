//go:build unix

package mcp

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openTerminal opens the controlling terminal for approval prompts. It refuses a terminal
// whose foreground process group is not this process's: a server started by an agent CLI
// that runs in the background of the terminal would be stopped (SIGTTIN) as soon as it read
// an answer.
func openTerminal() (*os.File, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	rc, err := tty.SyscallConn()
	if err != nil {
		tty.Close()
		return nil, err
	}
	var fg int
	var ioErr error
	if err := rc.Control(func(fd uintptr) { fg, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil || ioErr != nil {
		tty.Close()
		return nil, errors.Join(err, ioErr)
	}
	if fg != unix.Getpgrp() {
		tty.Close()
		return nil, errors.New("the terminal's foreground belongs to another process group")
	}
	return tty, nil
}
