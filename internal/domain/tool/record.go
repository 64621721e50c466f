package tool

import (
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Record is how a state file records a call whose invoker returned r and err after took:
// one definition for the agent loop and for `awf mcp serve`, whose records of an agent CLI's
// calls end up in the same tool_calls. An error makes an error result; fault.Denied errors
// and denied results are recorded as denials. A failure always says something, so that a
// reviewer never reads a bare "success: false".
func (r Result) Record(err error, took time.Duration) state.ToolCallResult {
	rec := state.ToolCallResult{
		Success:    err == nil && r.Succeeded() && !r.Denied,
		Output:     r.Output,
		Error:      r.Error,
		DurationMs: took.Milliseconds(),
		Approval:   r.Approval,
		Denied:     r.Denied,
		Truncated:  r.Truncated,
		Cached:     r.Cached,
		Command:    r.Command,
		Changes:    r.Changes,
	}
	if r.Refusal != nil {
		rec.Layer, rec.Rule = r.Refusal.Layer, r.Refusal.Rule
	}
	if err != nil {
		rec.Error = err.Error()
		rec.Denied = rec.Denied || fault.KindOf(err) == fault.Denied
	}
	if !rec.Success && rec.Error == "" {
		rec.Error = "the tool failed without saying why"
	}
	return rec
}
