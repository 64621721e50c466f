package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// fdRealPath returns the path of the file an open descriptor refers to, from /proc/self/fd.
// The answer is about the descriptor, not a name, so it cannot be raced: it is where the
// openat walk really arrived. It fails when /proc is not mounted; callers then fall back to a
// stricter check that refuses symlinks.
func fdRealPath(f *os.File) (string, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return "", fmt.Errorf("real path of %s: %w", f.Name(), err)
	}
	var p string
	var rerr error
	if err := sc.Control(func(fd uintptr) {
		p, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	}); err != nil {
		return "", fmt.Errorf("real path of %s: %w", f.Name(), err)
	}
	if rerr != nil {
		return "", fmt.Errorf("real path of %s: %w", f.Name(), rerr)
	}
	if !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return "", fmt.Errorf("real path of %s: unusable answer %q", f.Name(), p)
	}
	return p, nil
}
