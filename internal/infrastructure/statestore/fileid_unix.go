//go:build unix

package statestore

import (
	"io/fs"
	"syscall"
)

// idOf returns the identity of the file info describes; ok is false where the system does
// not say.
func idOf(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{Ino: uint64(st.Ino), Size: info.Size(), Mtime: info.ModTime().UnixNano()}, true
}
