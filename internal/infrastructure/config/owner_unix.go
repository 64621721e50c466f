//go:build unix

package config

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUser reports whether fi belongs to the user awf runs as (see FindProject).
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}

// heldByUser reports whether the directory fi may hold the user's .awf: it is the user's or
// root's (see FindProject).
func heldByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Uid == 0 || int(st.Uid) == os.Geteuid()
}
