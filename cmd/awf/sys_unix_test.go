//go:build unix

package main

import "syscall"

// recvNow reads a datagram already queued on the socket fd, without waiting for one.
func recvNow(fd uintptr, buf []byte) (int, error) {
	n, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
	return n, err
}

// killPID kills the process pid (a survivor a test found), ignoring errors.
func killPID(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
