//go:build !linux

package statestore

import "os"

// syncData flushes a file to disk; only Linux has fdatasync, which skips the timestamps.
func syncData(f *os.File) error { return f.Sync() }
