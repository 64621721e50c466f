//go:build unix

package mcp

import (
	"errors"
	"syscall"
)

// processGone is nil when no process pid exists (kill(pid, 0) gives ESRCH), else what kill said.
func processGone(pid int) error {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	if err == nil {
		return errors.New("kill(0) succeeded")
	}
	return err
}
