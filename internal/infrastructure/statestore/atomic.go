package statestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Modes of everything the store creates: run records may hold secrets a tool printed.
const (
	fileMode os.FileMode = 0o600
	dirMode  os.FileMode = 0o700
)

// tempSuffix ends the names of files being written. Their names also start with a dot, so a
// leftover from a crash is neither a state file nor an output file to any reader.
const tempSuffix = ".tmp"

// writeAtomic replaces dir/name with the concatenation of parts: it writes a temporary file in
// dir, flushes it to disk (unless flush is false, which only benchmarks ask for) and renames
// it over the target, so a crash leaves either the old or the new file. The caller syncs dir
// afterwards to make the rename itself durable.
func writeAtomic(dir, name string, flush bool, parts ...string) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*"+tempSuffix) // CreateTemp uses mode 0600
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()           // already failed; the write error is the one to report
			_ = os.Remove(f.Name()) // best effort: a leftover temp file is ignored by readers
		}
	}()
	if err := writeParts(f, parts); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if flush {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", f.Name(), err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	target := filepath.Join(dir, name)
	if err := os.Rename(f.Name(), target); err != nil {
		return fmt.Errorf("rename %s to %s: %w", f.Name(), target, err)
	}
	return nil
}

// writeParts writes parts to f in one system call, joined in a buffer that is kept for the
// next file: a state file is rewritten at every tool call, and is made of many parts.
func writeParts(f *os.File, parts []string) error {
	if len(parts) == 1 {
		_, err := f.WriteString(parts[0])
		return err
	}
	bp := writeBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	for _, p := range parts {
		buf = append(buf, p...)
	}
	_, err := f.Write(buf)
	if cap(buf) <= maxKeptBuf {
		*bp = buf
		writeBufs.Put(bp)
	}
	return err
}

// writeBufs holds the buffers of writeParts; one larger than maxKeptBuf is not kept.
var writeBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxKeptBuf = 16 << 20

// syncDir flushes a directory's entries, making renames and creations in it durable.
// Windows cannot open a directory for syncing, and its renames need no such step.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return d.Close()
}

// ensureDir creates dir (and its parents) with mode 0700 if it does not exist.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	return nil
}

// isTemp reports whether name is a file being written, or left over by a crash.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix)
}

// isTempOf reports whether name is a temporary file writeAtomic made for target: "." target
// "." digits ".tmp", as os.CreateTemp fills the pattern.
func isTempOf(name, target string) bool {
	rest, ok := strings.CutPrefix(name, "."+target+".")
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, tempSuffix)
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// removeIfExists deletes path; a missing file is not an error.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
