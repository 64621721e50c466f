//go:build !unix

package config

import "io/fs"

// ownedByUser reports whether fi belongs to the user awf runs as; without Unix owners every
// directory counts as the user's.
func ownedByUser(fs.FileInfo) bool { return true }

// heldByUser reports whether the directory fi may hold the user's .awf; without Unix owners,
// every one may.
func heldByUser(fs.FileInfo) bool { return true }
