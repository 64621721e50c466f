package mcp

import (
	"errors"
	"os"
)

// processGone is nil when no process pid exists (it cannot be opened).
func processGone(pid int) error {
	if p, err := os.FindProcess(pid); err == nil {
		p.Release()
		return errors.New("the process can still be opened")
	}
	return nil
}
