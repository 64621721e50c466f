package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/jsonl"
)

// CallSink receives the record of every call a Server runs, allowed, denied or failed, in
// the form a state file keeps it. CallLog is one.
type CallSink interface {
	Append(rec state.ToolCallRecord) error
}

// CallLog appends call records to a file, one JSON object (a state.ToolCallRecord) per line:
// how `awf mcp serve --calls-file` tells the awf run whose agent CLI started it what the
// agent did, so that the step's state holds the calls. Outputs are kept whole (the state
// store moves large ones beside the state file). The file is opened for appending and each
// record is one write (jsonl.Appender), so that several servers of one turn can share it, a
// reader sees at worst a torn last line, and a record appended after one cut short starts on
// a line of its own. Safe for concurrent use.
type CallLog struct {
	mu sync.Mutex
	f  *jsonl.Appender
}

var _ CallSink = (*CallLog)(nil)

// OpenCallLog opens path for appending, creating it readable by its owner only (0600).
func OpenCallLog(path string) (*CallLog, error) {
	f, err := jsonl.Open(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the calls file: %w", err)
	}
	return &CallLog{f: f}, nil
}

// Append writes rec as one line.
func (l *CallLog) Append(rec state.ToolCallRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("calls file: record of call %s: %w", rec.ID, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.f.Append(line); err != nil {
		return fmt.Errorf("calls file: %w", err)
	}
	return nil
}

// Close closes the file.
func (l *CallLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("calls file: %w", err)
	}
	return nil
}

// ReadCallLog reads the records a CallLog appended to path, numbers kept exact
// (json.Number): how the run whose agent CLI started `awf mcp serve --calls-file` learns the
// agent's calls. No file means no calls: the agent never started the server. A last
// line without its newline was cut short (the server was killed while writing) and is left
// out unless it holds a whole record; any other line that is not a call record is an error,
// returned with the records before it.
func ReadCallLog(path string) ([]state.ToolCallRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var calls []state.ToolCallRecord
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return calls, fmt.Errorf("read %s: %w", path, err)
		}
		torn := err != nil
		if len(bytes.TrimSpace(line)) > 0 {
			rec, perr := parseCall(line)
			switch {
			case perr == nil:
				calls = append(calls, rec)
			case !torn:
				return calls, fmt.Errorf("%s:%d: %w", path, n, perr)
			}
		}
		if torn {
			return calls, nil
		}
	}
}

// parseCall decodes one line of a calls file.
func parseCall(line []byte) (state.ToolCallRecord, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var rec state.ToolCallRecord
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("not a call record: %w", err)
	}
	if dec.More() {
		return rec, errors.New("not a call record: more than one JSON value")
	}
	if rec.ID == "" || rec.Tool == "" || rec.Result == nil {
		return rec, errors.New("not a call record: no id, tool or result")
	}
	return rec, nil
}
