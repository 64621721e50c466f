//go:build unix

package process

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// nonTerminating are the signals whose default action does not end a process: job control
// and informational ones.
var nonTerminating = []syscall.Signal{syscall.SIGCONT, syscall.SIGSTOP, syscall.SIGTSTP,
	syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGCHLD, syscall.SIGURG, syscall.SIGWINCH}

// kill sends sig to pid, or to the process group -pid.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// getpgid is pid's process group.
func getpgid(pid int) (int, error) { return syscall.Getpgid(pid) }

// signalNum is the signal named name ("SIGTERM"), or 0.
func signalNum(name string) syscall.Signal { return unix.SignalNum(name) }

// signalName is sig's name ("SIGTERM").
func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }
