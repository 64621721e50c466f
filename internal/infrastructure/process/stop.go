package process

import (
	"context"
	"errors"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// errTimedOut is the cause of a context ended by the request's own timeout.
var errTimedOut = errors.New("process timeout")

// WithTimeout returns the context a script runs under: cancelled with ctx, and, when d is
// positive, after d with a cause that StopError reports as "timed out after d". Every
// ports.ProcessRunner of awf (Runner, Local and the container backend) stops scripts this
// way, so that their errors read alike.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errTimedOut)
}

// StopError is the error of a run that ctx stopped, ctx being from WithTimeout (or the caller's
// context itself): kind fault.Execution, saying "timed out after <timeout>" when the request's
// own timeout ended it, "timed out" when a deadline of the caller did, and "interrupted"
// otherwise. It wraps ctx's error, so that errors.Is sees context.Canceled or
// context.DeadlineExceeded.
func StopError(ctx context.Context, timeout time.Duration) error {
	cause := context.Cause(ctx)
	msg := "interrupted"
	switch {
	case errors.Is(cause, errTimedOut):
		msg = "timed out after " + timeout.String()
	case errors.Is(cause, context.DeadlineExceeded):
		msg = "timed out"
	}
	return fault.Wrap(fault.Execution, &stoppedError{msg: msg, cause: ctx.Err()})
}

// stoppedError says why a run was stopped and wraps the context's error.
type stoppedError struct {
	msg   string
	cause error
}

func (e *stoppedError) Error() string { return e.msg }
func (e *stoppedError) Unwrap() error { return e.cause }
