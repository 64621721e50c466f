// Package fault classifies errors by who must act on them: the user, the workflow author, the
// run itself, the machine, or a policy. Layers classify where the fact is known and never
// reclassify; only cmd/awf turns a Kind into an exit code.
package fault

import (
	"errors"
	"fmt"
)

// Kind says what class of failure an error is. The zero value is System: an unclassified error
// is our bug or the machine's, never the user's.
type Kind int

const (
	// System is an unexpected failure of the machine or of awf itself.
	System Kind = iota
	// Usage is a bad flag, argument, input value or missing file named by the user.
	Usage
	// Invalid is a workflow or tool definition that does not load or validate.
	Invalid
	// Execution is a step or tool that ran and failed.
	Execution
	// Denied is a call refused by sandbox policy or approval where that ends the run.
	Denied
)

func (k Kind) String() string {
	switch k {
	case Usage:
		return "usage"
	case Invalid:
		return "invalid"
	case Execution:
		return "execution"
	case Denied:
		return "denied"
	default:
		return "system"
	}
}

// Error is an error with a Kind. It wraps its cause, so errors.Is and errors.As see through it.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf reports the error's kind: the first Kind found in the wrap chain.
func KindOf(err error) Kind {
	var k interface{ FaultKind() Kind }
	if errors.As(err, &k) {
		return k.FaultKind()
	}
	return System
}

// FaultKind lets other error types take part in classification without wrapping in *Error.
func (e *Error) FaultKind() Kind { return e.Kind }

// New returns an error of kind k with a formatted message; %w wraps as in fmt.Errorf.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Wrap classifies err as k. A nil err stays nil.
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}
