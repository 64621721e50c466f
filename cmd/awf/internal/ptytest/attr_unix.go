//go:build unix

package ptytest

import "syscall"

// SessionAttr starts a child in a session of its own (setsid) with the terminal on its
// descriptor ctty as its controlling terminal; a negative ctty gives it none.
func SessionAttr(ctty int) *syscall.SysProcAttr {
	if ctty < 0 {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ctty}
}
