//go:build !unix

package statestore

import "io/fs"

// idOf says nothing where FileInfo has no inode: there the index of finished runs is not kept
// and List reads every state file.
func idOf(fs.FileInfo) (fileID, bool) { return fileID{}, false }
