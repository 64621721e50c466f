package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// ValidateChain reports what keeps a chain from running (seed 003's validate): its shape
// (tool.Chain.Check) and every tool that does not resolve.
func (r *Registry) ValidateChain(c tool.Chain) []string {
	return r.validateChain(c, nil)
}

func (r *Registry) validateChain(c tool.Chain, self *entry) []string {
	probs := c.Check()
	for i, s := range c.Steps {
		if s.Tool == "" {
			continue
		}
		if _, err := r.resolve(s.Tool, self); err != nil {
			probs = append(probs, fmt.Sprintf("step %d (%s): %v", i+1, s.Tool, err))
		}
	}
	return probs
}

// RunChain runs a chain from an initial context (seed 003's execute with validate_tools):
// it first checks that every tool exists, then runs the steps in order, each reading its
// arguments from the context through input_mapping and storing its data under output_key
// (or merging it). A failure stops the chain unless ContinueOnFailure is set. Calls go
// through the pipeline with validation; initial is not changed.
func (r *Registry) RunChain(ctx context.Context, c tool.Chain, initial map[string]any) tool.ChainResult {
	return r.runChain(ctx, nil, nil, c, initial)
}

func (r *Registry) runChain(ctx context.Context, parent *Call, self *entry, c tool.Chain, initial map[string]any) tool.ChainResult {
	if self != nil && self.Manifest != nil { // pin the steps to the manifest's dependencies
		c.Steps = slices.Clone(c.Steps)
		for i := range c.Steps {
			c.Steps[i].Tool = self.Manifest.Pinned(c.Steps[i].Tool)
		}
	}
	start := r.cfg.Clock.Now()
	res := tool.ChainResult{Context: maps.Clone(initial), StepResults: []tool.Outcome{}}
	if res.Context == nil {
		res.Context = map[string]any{}
	}
	finish := func() tool.ChainResult {
		res.Success = len(res.Errors) == 0
		res.DurationMS = float64(r.cfg.Clock.Now().Sub(start).Microseconds()) / 1000
		return res
	}
	if probs := r.validateChain(c, self); len(probs) > 0 {
		res.Errors = probs
		return finish()
	}
	for i, s := range c.Steps {
		err := r.chainStep(ctx, parent, self, i, s, &res)
		if err != "" {
			res.Errors = append(res.Errors, fmt.Sprintf("step %d (%s): %s", i+1, s.Tool, err))
			if !c.ContinueOnFailure {
				break
			}
		}
	}
	return finish()
}

// chainStep runs one step and stores its result; it returns what went wrong, if anything.
func (r *Registry) chainStep(ctx context.Context, parent *Call, self *entry, i int, s tool.ChainStep, res *tool.ChainResult) string {
	args, err := s.MapInput(res.Context)
	if err != nil {
		res.StepResults = append(res.StepResults, tool.Outcome{Tool: s.Tool, Status: tool.OutcomeError, Message: err.Error()})
		return err.Error()
	}
	out, call := r.nested(ctx, parent, self, i+1, false, ports.ToolRequest{Name: s.Tool, Args: args})
	o := outcome(call, out)
	res.StepResults = append(res.StepResults, o)
	if !o.Succeeded() {
		return o.Message
	}
	if err := s.Store(res.Context, o.Data); err != nil {
		return err.Error()
	}
	return ""
}

// chainTool is a manifest that is a chain: its arguments are the starting context, its
// result's data the final context.
type chainTool struct{ manifestTool }

var (
	_ tool.Tool       = (*chainTool)(nil)
	_ tool.Annotated  = (*chainTool)(nil)
	_ tool.Summarizer = (*chainTool)(nil)
	_ tool.Located    = (*chainTool)(nil)
)

// Execute runs the chain. The output is the manifest's output template over the final
// context (top-level keys as {vars}), or the context as JSON.
func (t *chainTool) Execute(ctx context.Context, inv tool.Invocation) tool.Result {
	m := t.e.Manifest
	if msg := t.r.unmet(t.e); msg != "" {
		return tool.Errorf(msg)
	}
	initial := tool.Defaults(m.Params(), inv.Args)
	cr := t.r.runChain(ctx, parentCall(ctx, m.Name, inv), t.e, *m.Chain, initial)
	if !cr.Success {
		return tool.Result{Status: tool.StatusError, Data: cr, Error: m.Name + ": " + strings.Join(cr.Errors, "; ")}
	}
	if m.Output == "" {
		b, err := json.Marshal(cr.Context)
		if err != nil {
			return tool.Errorf(fmt.Sprintf("%s: the final context is not JSON: %v", m.Name, err))
		}
		return tool.Result{Status: tool.StatusOK, Output: string(b), Data: cr.Context}
	}
	vars := make(map[string]string, len(cr.Context))
	for k, v := range cr.Context {
		vars[k] = tool.ArgText(v)
	}
	out, err := tool.Substitute(m.Output, vars)
	if err != nil {
		return tool.Errorf(fmt.Sprintf("%s: output: %v", m.Name, err))
	}
	return tool.Result{Status: tool.StatusOK, Output: out, Data: cr.Context}
}
