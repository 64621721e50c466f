//go:build !unix

package mcp

import (
	"errors"
	"os"
)

// openTerminal reports that no controlling terminal can be opened here.
func openTerminal() (*os.File, error) {
	return nil, errors.New("no controlling terminal on this system")
}
