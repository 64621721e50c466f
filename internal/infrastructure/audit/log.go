// Package audit keeps awf's audit log: an append-only JSON Lines file (.awf/audit.jsonl by
// default), mode 0600, one record per tool call written with a single write and fsync'd, with
// secrets masked. It implements ports.AuditSink, and reads the file back for `awf audit`,
// tolerating a torn last line. Several goroutines and several awf processes may append to one
// file at once.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/jsonl"
)

// File permissions of the log and of a directory created for it.
const (
	FileMode = 0o600
	DirMode  = 0o700
)

// Options tune a Log. The zero value is the production setting.
type Options struct {
	// NoSync skips the fsync after each record. Records may then be lost in a crash; only
	// benchmarks and throwaway runs want it.
	NoSync bool
	// MaxValue is the longest string kept in arguments and meta (longer ones are cut, with
	// their size noted); 0 means DefaultMaxValue.
	MaxValue int
	// MaxError is the longest error text kept; 0 means DefaultMaxError.
	MaxError int
}

// Default cuts.
const (
	DefaultMaxValue = 4096
	DefaultMaxError = 2048
)

// Log appends records to an audit file. Build it with Open and Close it when done. Safe for
// concurrent use.
type Log struct {
	path string
	opt  Options

	mu   sync.Mutex
	file *jsonl.Appender // nil once closed
}

var _ ports.AuditSink = (*Log)(nil)

// Open opens (creating it, and its directory with mode 0700, if needed) the audit log at
// path for appending. A file readable by others is narrowed to 0600. Errors are fault.System.
func Open(path string, opt Options) (*Log, error) {
	if opt.MaxValue <= 0 {
		opt.MaxValue = DefaultMaxValue
	}
	if opt.MaxError <= 0 {
		opt.MaxError = DefaultMaxError
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, DirMode); err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
		}
	}
	a, err := jsonl.Open(path, FileMode)
	if err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
	}
	if err := narrow(a.File()); err != nil {
		a.Close()
		return nil, fault.Wrap(fault.System, fmt.Errorf("audit log %s: %w", path, err))
	}
	return &Log{path: path, opt: opt, file: a}, nil
}

// narrow makes sure the open file is a regular file with mode 0600 (the umask, or an older
// file created by hand, may have left it wider).
func narrow(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if st.Mode().Perm() != FileMode {
		if err := f.Chmod(FileMode); err != nil {
			return fmt.Errorf("set mode 0600: %w", err)
		}
	}
	return nil
}

// Path returns the file the log appends to.
func (l *Log) Path() string { return l.path }

// Record masks secrets in rec, encodes it as one line and appends it with a single write,
// then fsyncs unless rec is a started record. Errors are fault.System: the record may be lost.
func (l *Log) Record(_ context.Context, rec ports.AuditRecord) error {
	line, err := Encode(rec, l.opt)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return fault.New(fault.System, "audit log %s: closed", l.path)
	}
	// One write with O_APPEND: lines from other processes never interleave with it.
	if err := l.file.Append(line); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("audit log %s: %w", l.path, err))
	}
	// A started record is not synced: once written, the kernel keeps it if awf is killed, and
	// the completion record's sync makes both durable. That saves a sync per call.
	if !l.opt.NoSync && rec.Outcome != ports.OutcomeStarted {
		if err := l.file.File().Sync(); err != nil {
			return fault.Wrap(fault.System, fmt.Errorf("audit log %s: sync: %w", l.path, err))
		}
	}
	return nil
}

// Close closes the file; later Records fail.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	if err != nil && !errors.Is(err, fs.ErrClosed) {
		return fault.Wrap(fault.System, fmt.Errorf("audit log %s: close: %w", l.path, err))
	}
	return nil
}

// Encode returns rec as one JSON line ending in a newline, with secrets masked in its
// arguments, meta, error text and sandbox reason, long strings cut per opt.
func Encode(rec ports.AuditRecord, opt Options) ([]byte, error) {
	if opt.MaxValue <= 0 {
		opt.MaxValue = DefaultMaxValue
	}
	if opt.MaxError <= 0 {
		opt.MaxError = DefaultMaxError
	}
	m := newMasker(rec.Secrets)
	rec.Arguments = m.args(rec.Arguments, opt.MaxValue)
	rec.Meta = cut(m.text(rec.Meta), opt.MaxValue)
	rec.Error = cut(m.text(rec.Error), opt.MaxError)
	if rec.Sandbox != nil {
		sb := *rec.Sandbox
		sb.Reason = cut(m.text(sb.Reason), opt.MaxError)
		rec.Sandbox = &sb
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("audit record: %w", err))
	}
	return buf.Bytes(), nil
}
