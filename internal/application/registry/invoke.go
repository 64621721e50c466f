package registry

import (
	"context"
	"strconv"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Invoke runs one call of a step or a model through the pipeline (ports.ToolInvoker).
// Arguments are validated, and string arguments are first converted to the types the schema
// declares, since a step's arguments are rendered templates. Failures the model should hear
// about are error results; the error is non-nil only for a fault: an unknown tool is
// fault.Invalid with a did-you-mean hint.
func (r *Registry) Invoke(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
	c := &Call{Request: req, Validate: true, Coerce: true}
	res := r.handler(ctx, c)
	return res, c.Err
}

// CallOptions tune Call. The zero value validates arguments and output, as seed 003's
// invoke(validate=True) does.
type CallOptions struct {
	Input string
	// NoValidate skips argument and output validation (seed 003's validate=False).
	NoValidate bool
	// Coerce converts string arguments to the declared types first (for arguments typed on
	// a command line or rendered from templates).
	Coerce  bool
	Timeout time.Duration
	// CallID, RunID and Step identify the call in records; all optional.
	CallID, RunID, Step string
}

// Call invokes a tool by name and returns seed 003's result: status (success, error,
// validation_error, not_found, timeout, denied), data (the structured result, or the output
// text), message, errors with JSON paths, and duration_ms.
func (r *Registry) Call(ctx context.Context, name string, args map[string]any, opts CallOptions) tool.Outcome {
	c := &Call{
		Request: ports.ToolRequest{Name: name, Args: args, Input: opts.Input, Timeout: opts.Timeout,
			CallID: opts.CallID, RunID: opts.RunID, Step: opts.Step},
		Validate: !opts.NoValidate,
		Coerce:   opts.Coerce,
	}
	return outcome(c, r.handler(ctx, c))
}

// nested runs a call made by a meta-tool or chain on behalf of parent (nil at the top).
// Arguments rendered from templates (meta-tool steps) are coerced; a chain's typed context
// values are not.
func (r *Registry) nested(ctx context.Context, parent *Call, self *entry, n int, coerce bool, req ports.ToolRequest) (tool.Result, *Call) {
	c := &Call{Request: req, Validate: true, Coerce: coerce, skip: self}
	if parent != nil {
		c.Depth = parent.Depth + 1
		c.Stack = append(append([]string(nil), parent.Stack...), parent.Request.Name)
		c.Request.RunID, c.Request.Step, c.Request.Scope = parent.Request.RunID, parent.Request.Step, parent.Request.Scope
		if parent.Request.CallID != "" {
			c.Request.CallID = parent.Request.CallID + "." + strconv.Itoa(n)
		}
	}
	return r.handler(ctx, c), c
}

// outcome turns a call's result into seed 003's form.
func outcome(c *Call, res tool.Result) tool.Outcome {
	o := tool.Outcome{Tool: c.Request.Name, Status: c.Status, Message: res.Error, Errors: c.Errors,
		DurationMS: float64(res.Duration) / float64(time.Millisecond), Cached: res.Cached, Truncated: res.Truncated}
	if o.Status == "" {
		o.Status = tool.OutcomeSuccess
		if !res.Succeeded() {
			o.Status = tool.OutcomeError
		}
	}
	switch {
	case res.Data != nil:
		o.Data = res.Data
	case res.Output != "" || res.Succeeded():
		o.Data = res.Output
	}
	return o
}
