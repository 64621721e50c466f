package statestore

import (
	"os"
	"syscall"
)

// syncData flushes a file's data, and the metadata needed to read it back (its size), to
// disk: fdatasync, which skips the timestamps fsync also writes.
func syncData(f *os.File) error {
	return fileCall(f, "fdatasync", syscall.Fdatasync)
}
