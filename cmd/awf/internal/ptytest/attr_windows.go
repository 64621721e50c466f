package ptytest

import "syscall"

// SessionAttr has nothing to set on Windows, which has no sessions or controlling terminals:
// a child starts as usual, and the tests that need a terminal are skipped (Open).
func SessionAttr(int) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
