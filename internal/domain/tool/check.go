package tool

import "context"

// Checker is implemented by tools that can tell, after a crash cut a call off, whether the
// call took effect, so that resume neither re-runs a call that did (an email sent twice) nor
// guesses about one that did not. Intent runs before every call, and what it returns is
// recorded with the call before the call runs; Check runs on resume with that record.
type Checker interface {
	// Checks reports whether this tool has a check (a command tool has one only when its
	// definition declares verify:).
	Checks() bool
	// Intent returns what Check will need to know of the call (write_file: the digest of
	// the content it is about to write), or nil.
	Intent(ctx context.Context, call Invocation) map[string]any
	// Check tells whether the call, recorded with intent, took effect.
	Check(ctx context.Context, call Invocation, intent map[string]any) Check
}

// Verdict is what a check found.
type Verdict string

// Verdicts.
const (
	VerdictDone    Verdict = "done"     // the call took effect: it must not run again
	VerdictNotDone Verdict = "not_done" // it did not: running it again is safe
	VerdictUnknown Verdict = "unknown"  // the check could not tell
)

// Check is the result of a check: the verdict and, for people, what it saw.
type Check struct {
	Verdict Verdict
	Detail  string
}
