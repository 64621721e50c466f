package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/awf-dev/awf/internal/domain/state"
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
// record is one write, so that several servers of one turn can share it and a reader sees at
// worst a torn last line. Safe for concurrent use.
type CallLog struct {
	mu sync.Mutex
	f  *os.File
}

var _ CallSink = (*CallLog)(nil)

// OpenCallLog opens path for appending, creating it readable by its owner only (0600).
func OpenCallLog(path string) (*CallLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
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
	if _, err := l.f.Write(line); err != nil {
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
