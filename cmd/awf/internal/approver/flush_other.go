//go:build !linux && !darwin

package approver

import "io"

// flushInput cannot flush a terminal's input queue here.
func flushInput(io.Reader) bool { return false }
