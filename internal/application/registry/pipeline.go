package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Call is one call on its way through the pipeline. Stages read it and may change it.
type Call struct {
	// Request is the call as asked for: name, arguments, input, run, step and call ids.
	Request ports.ToolRequest
	// Tool and Entry are set by the resolve stage: the tool to run and where it was defined
	// (its level, source, kind; Description, Parameters and Shadows are left empty: ask Tool).
	Tool  tool.Tool
	Entry Entry
	// Depth is the meta-tool nesting depth: 0 for a call from a step or a model.
	Depth int
	// Stack names the meta-tools and chains this call is nested in, outermost first.
	Stack []string
	// Validate enables argument and output validation; Coerce converts string arguments to
	// the types the schema declares (for calls whose arguments come from templates).
	Validate bool
	Coerce   bool
	// Status classifies a failure more precisely than an error result does (validation,
	// timeout, denial); empty means the result's own success or error.
	Status tool.OutcomeStatus
	// Errors are the validation failures, with JSON paths.
	Errors []tool.FieldError
	// Err is a fault the caller of Invoke receives besides the result: an unknown tool
	// (fault.Invalid) or, from a policy stage, a denial (fault.Denied).
	Err error

	entry *entry
	skip  *entry // the definition making this call: a reference to its own name skips it
}

// Handler runs a call and returns its result.
type Handler func(ctx context.Context, c *Call) tool.Result

// Stage wraps a Handler: it may inspect or change the call, refuse it by returning a result
// without calling next, or look at the result next returns.
type Stage func(next Handler) Handler

// chain builds a handler from stages, the first outermost.
func chain(final Handler, stages ...Stage) Handler {
	h := final
	for i := len(stages) - 1; i >= 0; i-- {
		h = stages[i](h)
	}
	return h
}

// pipeline is record -> resolve -> coerce -> validate arguments -> Config.Stages -> cache ->
// validate output -> execute.
func (r *Registry) pipeline() Handler {
	stages := []Stage{r.record, r.resolveStage, r.coerceStage, r.validateArgs}
	stages = append(stages, r.cfg.Stages...)
	stages = append(stages, r.cacheStage, r.validateOutput)
	return chain(r.execute, stages...)
}

// record measures the call with the injected clock.
func (r *Registry) record(next Handler) Handler {
	return func(ctx context.Context, c *Call) tool.Result {
		start := r.cfg.Clock.Now()
		res := next(ctx, c)
		res.Duration = r.cfg.Clock.Now().Sub(start)
		return res
	}
}

// resolveStage finds the tool and enforces the nesting limit.
func (r *Registry) resolveStage(next Handler) Handler {
	return func(ctx context.Context, c *Call) tool.Result {
		if c.Depth > r.cfg.MaxDepth {
			c.Status = tool.OutcomeError
			calls := strings.Join(append(append([]string(nil), c.Stack...), c.Request.Name), " -> ")
			return tool.Errorf(fmt.Sprintf("meta-tools nest deeper than the limit of %d: %s", r.cfg.MaxDepth, calls))
		}
		e, err := r.resolve(c.Request.Name, c.skip)
		if err != nil {
			c.Status, c.Err = tool.OutcomeNotFound, err
			return gateRefusal(c, ports.RuleUnknownTool, err.Error())
		}
		c.entry, c.Tool, c.Entry = e, e.Tool, e.Entry
		return next(ctx, c)
	}
}

// coerceStage converts string arguments to their declared types when the call asks for it,
// and Go numbers to json.Number always.
func (r *Registry) coerceStage(next Handler) Handler {
	return func(ctx context.Context, c *Call) tool.Result {
		if c.Coerce && len(c.entry.propTypes) > 0 {
			c.Request.Args = coerce(c.Request.Args, c.entry.propTypes)
		}
		c.Request.Args = jsonNumbers(c.Request.Args)
		return next(ctx, c)
	}
}

// validateArgs checks the arguments against the tool's parameter schema.
func (r *Registry) validateArgs(next Handler) Handler {
	return func(ctx context.Context, c *Call) tool.Result {
		if !c.Validate {
			return next(ctx, c)
		}
		args := c.Request.Args
		if args == nil {
			args = map[string]any{}
		}
		errs, err := r.cfg.Validator.Validate(c.Tool.Parameters(), args)
		if err != nil {
			c.Status = tool.OutcomeError
			return tool.Errorf(fmt.Sprintf("tool %q has an unusable parameter schema: %v", c.Request.Name, err))
		}
		if len(errs) > 0 {
			c.Status, c.Errors = tool.OutcomeValidationError, errs
			return gateRefusal(c, ports.RuleArgsSchema, fmt.Sprintf("invalid arguments for tool %q: %s", c.Request.Name, tool.FieldErrors(errs)))
		}
		c.Request.Args = canonicalIntegers(c.Request.Args, c.entry.propTypes)
		return next(ctx, c)
	}
}

// validateOutput checks a successful result against the tool's output schema, if it has one;
// the parsed output becomes the result's Data.
func (r *Registry) validateOutput(next Handler) Handler {
	return func(ctx context.Context, c *Call) tool.Result {
		res := next(ctx, c)
		o, ok := c.Tool.(tool.OutputSchemer)
		if !c.Validate || !ok || !res.Succeeded() {
			return res
		}
		schema := o.OutputSchema()
		if len(schema) == 0 {
			return res
		}
		data := res.Data
		if data == nil {
			v, err := tool.DecodeJSON([]byte(res.Output))
			if err != nil {
				c.Status, c.Errors = tool.OutcomeValidationError, []tool.FieldError{{Path: "$", Message: "the output is not JSON: " + err.Error()}}
				return failed(res, fmt.Sprintf("tool %q returned output that is not JSON: %v", c.Request.Name, err))
			}
			data = v
		}
		errs, err := r.cfg.Validator.Validate(schema, data)
		if err == nil && len(errs) > 0 {
			c.Status, c.Errors = tool.OutcomeValidationError, errs
			return failed(res, fmt.Sprintf("tool %q returned output that does not match its output schema: %s",
				c.Request.Name, tool.FieldErrors(errs)))
		}
		res.Data = data
		return res
	}
}

// failed turns a result into an error result, keeping its output.
func failed(res tool.Result, msg string) tool.Result {
	res.Status, res.Error = tool.StatusError, msg
	return res
}

// execute runs the tool with the call's timeout; a panic becomes an error result.
func (r *Registry) execute(ctx context.Context, c *Call) (res tool.Result) {
	timeout := c.Request.Timeout
	if timeout <= 0 {
		timeout = r.cfg.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			c.Status = tool.OutcomeError
			res = tool.Errorf(fmt.Sprintf("tool %q crashed: %v", c.Request.Name, p))
		}
	}()
	inv := tool.Invocation{ID: c.Request.CallID, Args: c.Request.Args, Input: c.Request.Input, Depth: c.Depth,
		Scope: c.Request.Scope}
	if inv.Args == nil {
		inv.Args = map[string]any{}
	}
	res = c.Tool.Execute(context.WithValue(ctx, callKey{}, c), inv)
	if res.Status == "" {
		res.Status = tool.StatusOK
	}
	if !res.Succeeded() && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		c.Status = tool.OutcomeTimeout
		if !strings.Contains(res.Error, "timed out") {
			res.Error = fmt.Sprintf("tool %q timed out after %s: %s", c.Request.Name, timeout, res.Error)
		}
	}
	return res
}

// gateRefusal is the result of a call the gate refuses under rule: a refusal (tool.Refused)
// for a call from a step or a model, which the governed path audits as a denial; inside a
// meta-tool or chain, an error of the step that made it, as a misconfigured step fails.
func gateRefusal(c *Call, rule, msg string) tool.Result {
	if c.Depth > 0 {
		return tool.Errorf(msg)
	}
	return tool.Refused(ports.LayerGate, rule, msg)
}
