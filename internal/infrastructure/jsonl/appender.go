// Package jsonl appends lines to files that several processes share (the audit log, the calls
// file of awf mcp serve), each line one write(2) on a file opened with O_APPEND, so that lines
// of different writers never interleave. It also keeps a line whole when the one before it
// was not: a writer killed in the middle of a long line (the kernel stops a multi-page write
// at a fatal signal) or stopped by a full disk leaves the file ending inside a line, and a
// line appended to that fragment would be unreadable with it. The next line then starts on
// a new line, and the fragment stays a damaged line of its own, which readers skip or report.
package jsonl

import (
	"fmt"
	"os"
	"syscall"
)

// Appender appends lines to one file. It is not safe for concurrent use: callers that share
// one serialise their calls.
type Appender struct {
	f *os.File
	// cut is set when the file may end inside a line.
	cut bool
}

// Open opens path for appending, creating it with perm. It is opened read-write so that its
// last byte can be read.
func Open(path string, perm os.FileMode) (*Appender, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Appender{f: f, cut: st.Mode().IsRegular() && endsInside(f, st.Size())}, nil
}

// endsInside reports whether the file of size bytes does not end with a newline.
func endsInside(f *os.File, size int64) bool {
	if size == 0 {
		return false
	}
	last := make([]byte, 1)
	_, err := f.ReadAt(last, size-1)
	return err != nil || last[0] != '\n'
}

// File is the open file, for what callers check or set on it (its mode, a sync).
func (a *Appender) File() *os.File { return a.f }

// Append writes line, which ends with a newline, in one write; after a line cut short, with
// a newline before it.
func (a *Appender) Append(line []byte) error {
	if a.cut {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := a.f.Write(line); err != nil {
		a.cut = true // part of it may be there
		return fmt.Errorf("write: %w", err)
	}
	a.cut = false
	return nil
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }
