package cmdutil

import (
	"errors"
	"io/fs"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// ErrorJSON is the "error" member of every --output json object of a command that failed: what
// kind of failure it was (the exit code says the same), the message printed on stderr, and
// where in which file the first problem is, when it is in a file. File, Line and Column are
// always present (empty or 0 when unknown) so that scripts need not test for them.
type ErrorJSON struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	ExitCode int    `json:"exit_code"`
}

// NewErrorJSON describes err, which ends the command with exit code code (130: interrupted).
func NewErrorJSON(err error, code int) *ErrorJSON {
	e := &ErrorJSON{Kind: fault.KindOf(err).String(), Message: err.Error(), ExitCode: code}
	if code == ExitInterrupted {
		e.Kind = "interrupted"
	}
	var ps workflow.Problems
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &ps) && len(ps.Errors()) > 0:
		p := ps.Errors()[0]
		e.File, e.Line, e.Column = p.Pos.File, p.Pos.Line, p.Pos.Col
	case errors.As(err, &pathErr) && fault.KindOf(err) == fault.Usage: // a file the user named
		e.File = pathErr.Path
	}
	return e
}

// ExitInterrupted is the exit code after Ctrl-C or SIGTERM.
const ExitInterrupted = 130

// WithError is a command result that carries the command's error: with --output json the
// command's one JSON object is the result with its error member set (SetError), written by
// the cli package, which alone knows the exit code. A command returns a ResultError instead of
// writing the result itself when it fails.
type WithError interface {
	SetError(*ErrorJSON)
}

// ResultError is the error of a command whose --output json result is still to be printed,
// with the error in it. It reads as Err, for messages and exit codes.
type ResultError struct {
	Result WithError
	Err    error
}

func (e *ResultError) Error() string { return e.Err.Error() }

// Unwrap returns the command's error.
func (e *ResultError) Unwrap() error { return e.Err }

// FailWith returns err unchanged for text output; with JSON output it returns a ResultError
// that has the cli package print result with err in it. A nil err gives nil.
func FailWith(format Format, result WithError, err error) error {
	if err == nil || !format.JSON() {
		return err
	}
	return &ResultError{Result: result, Err: err}
}
