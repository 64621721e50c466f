// Package jsonl appends lines to files that several processes share (the audit log, the calls
// file of awf mcp serve), each line one write(2) on a file opened with O_APPEND, so that lines
// of different writers never interleave. It also keeps a line whole when the one before it
// was not: a writer killed in the middle of a long line (the kernel stops a multi-page write
// at a fatal signal) or stopped by a full disk leaves the file ending inside a line, and a
// line appended to that fragment would be unreadable with it. Before each line the file's
// last byte is read (under an flock that awf's writers take in turn, so that none reads
// another's line half written); when it is no newline, the line starts on a new line, and
// the fragment stays a damaged line of its own, which readers skip or report.
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
	// cut is set when the last write failed: part of its line may be there.
	cut bool
}

// Open opens path for appending, creating it with perm. It is opened read-write so that its
// last byte can be read.
func Open(path string, perm os.FileMode) (*Appender, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, err
	}
	return &Appender{f: f}, nil
}

// endsInside reports whether the file, if it is a regular one, does not end with a newline.
// It is asked before every line, not once at Open: another process appending to the file
// may be killed inside a line at any time.
func (a *Appender) endsInside() bool {
	st, err := a.f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return false
	}
	var last [1]byte
	_, err = a.f.ReadAt(last[:], st.Size()-1)
	return err != nil || last[0] != '\n'
}

// File is the open file, for what callers check or set on it (its mode, a sync).
func (a *Appender) File() *os.File { return a.f }

// Append writes line, which ends with a newline, in one write; after a line cut short, with
// a newline before it.
func (a *Appender) Append(line []byte) error {
	if unlock := lockAppends(a.f); unlock != nil {
		defer unlock()
	}
	if a.cut || a.endsInside() {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := a.f.Write(line); err != nil {
		a.cut = true // part of it may be there
		return fmt.Errorf("write: %w", err)
	}
	a.cut = false
	return nil
}

// Lock takes the lock that Append holds while it writes, until unlock is called, so that a
// caller can read the whole file, or replace it, while no awf writer appends to it. Lines that
// writers holding the file open append after unlock still go to this file, replaced or not.
// Where there is no such lock (outside Unix, or when it cannot be had) it takes none; unlock is
// never nil. An Append before unlock would end the lock as it returns.
func (a *Appender) Lock() (unlock func()) {
	if unlock := lockAppends(a.f); unlock != nil {
		return unlock
	}
	return func() {}
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }
