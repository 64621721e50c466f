// Package regfile opens files that awf only reads and that someone else may have put in its
// place (a state directory or audit log copied from CI, a path a state file names): a FIFO
// there must not block awf for ever on open, nor a device such as /dev/zero fill its memory.
// Anything but a regular file is refused with an error that says what it is.
package regfile

import (
	"fmt"
	"io"
	"os"
)

// Open opens path for reading, refusing anything but a regular file (after symbolic links).
// The error of a missing file is os.ErrNotExist's, as os.Open's is.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile is os.ReadFile of a regular file only (see Open).
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
