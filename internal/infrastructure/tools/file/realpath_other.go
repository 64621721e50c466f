//go:build !linux

package file

import (
	"errors"
	"os"
)

// fdRealPath is unavailable outside Linux; callers fall back to a check that refuses any
// symlink on the path.
func fdRealPath(*os.File) (string, error) {
	return "", errors.ErrUnsupported
}
