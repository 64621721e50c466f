//go:build !linux

package ptytest

import (
	"errors"
	"os"
	"runtime"
)

// openPTY fails outside Linux: this helper opens pseudo-terminals through Linux's /dev/ptmx
// ioctls only, so the tests that need one are skipped there.
func openPTY() (*os.File, string, error) {
	return nil, "", errors.New("ptytest opens pseudo-terminals on Linux only, not on " + runtime.GOOS)
}

// openTerm is never reached outside Linux (openPTY fails first).
func openTerm(string) (*os.File, error) {
	return nil, errors.New("ptytest: no terminal on " + runtime.GOOS)
}
