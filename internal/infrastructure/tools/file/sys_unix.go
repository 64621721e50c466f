//go:build unix

package file

import (
	"os"
	"syscall"
)

// linkCount returns the number of hard links to the file, or 1 when unknown.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// Open flags: directories are opened with O_DIRECTORY and files with O_NONBLOCK, so that a
// FIFO where a directory or file was expected fails or is refused instead of blocking.
const (
	oDirectory = syscall.O_DIRECTORY
	oNonblock  = syscall.O_NONBLOCK
)
