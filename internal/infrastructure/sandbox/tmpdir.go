package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// tempPrefix names the private temporary directories of sandboxes under the system's
// temporary directory. (Directories named awf-sandbox-* were made by earlier versions, which
// held no lock on them: they are left alone.)
const tempPrefix = "awf-tmp-"

// sweepOnce removes, once per process, the private temporary directories no live awf holds.
var sweepOnce sync.Once

// makeTempDir creates a sandbox's private temporary directory and holds a lock on it until
// remove, which deletes it. An awf killed with SIGKILL (or by the OOM killer) cannot remove
// its directories: the first sandbox of each awf process deletes those whose lock no process
// holds (holding the lock itself while it deletes), which works across PID namespaces, since
// the lock is on the directory, not on a pid. Where there is no such lock (Windows) nothing is
// swept.
func makeTempDir() (dir string, remove func() error, err error) {
	sweepOnce.Do(sweepTempDirs)
	dir, err = os.MkdirTemp("", tempPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("private temp dir: %w", err)
	}
	unlock, err := holdDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("private temp dir: %w", err)
	}
	return dir, func() error {
		err := os.RemoveAll(dir)
		unlock()
		return err
	}, nil
}

// sweepAge is how old a directory must be to be swept: another awf holds its directory from
// just after creating it (makeTempDir), and a sweep in between must not take it.
const sweepAge = 10 * time.Second

// sweepTempDirs deletes the private temporary directories that no process holds.
func sweepTempDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err != nil || time.Since(fi.ModTime()) < sweepAge {
			continue
		}
		if unlock, ok := takeDir(d); ok {
			os.RemoveAll(d)
			unlock()
		}
	}
}
