//go:build !unix

package file

import "os"

// linkCount is unknown on this platform: report a single link.
func linkCount(os.FileInfo) uint64 { return 1 }

// Open flags without equivalents here.
const (
	oDirectory = 0
	oNonblock  = 0
)
