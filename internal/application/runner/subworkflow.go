package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// subWorkflow runs a workflow step: it loads the file (relative to the calling workflow's
// directory), renders and coerces the inputs, and runs the workflow as a child run with its
// own state, whose output becomes the step's output. The child's id is recorded in the step's
// vars before it starts; when a resumed run executes the step again, an unfinished child run
// is resumed rather than started afresh, and a completed one gives its output directly.
func (e *execution) subWorkflow(ctx context.Context, sr *stepRun, attempt int) (StepOutcome, error) {
	ws := sr.step.Workflow
	scope := e.scope()
	base := e.wf.Dir
	if base == "" {
		base = e.st.WorkDir
	}
	file := resolvePath(base, ws.Path)
	child, err := e.r.load(file)
	if err != nil {
		return StepOutcome{}, fmt.Errorf("workflow %s: %w", ws.Path, err)
	}
	if len(e.lineage) > MaxWorkflowDepth {
		chain := append(e.lineage[:len(e.lineage):len(e.lineage)], child.Name)
		return StepOutcome{}, fault.New(fault.Invalid, "workflows nest deeper than %d: %s",
			MaxWorkflowDepth, strings.Join(chain, " -> "))
	}
	prev, unlock, err := e.previousSubRun(ctx, sr, attempt)
	if err != nil {
		return StepOutcome{}, err
	}
	if prev != nil {
		defer unlock()
		return e.continueSubRun(ctx, prev, child)
	}
	raw, err := e.renderMap(ws.Inputs, scope, "input")
	if err != nil {
		return StepOutcome{}, err
	}
	inputs, err := resolveInputs(child, raw)
	if err != nil {
		return StepOutcome{}, err
	}
	id := e.r.d.NewID()
	vars := map[string]string{state.SubRunVar: id}
	_ = sr.save(ctx, func(s *state.StepState) {
		if s.Vars == nil {
			s.Vars = map[string]string{}
		}
		s.Vars[state.SubRunVar] = id
	})
	req := Request{Workflow: child, Inputs: inputs, WorkDir: e.st.WorkDir, Parent: e.st.ID, ID: id, Lineage: e.lineage}
	var sub *state.RunState
	if e.r.d.SubRun != nil {
		sub, err = e.r.d.SubRun(ctx, req)
	} else {
		sub, err = e.r.run(ctx, req, id, e.lineage)
	}
	return subOutcome(child, sub, vars, err)
}

// previousSubRun returns the unfinished or completed child run a resumed step left, or nil,
// and owns it (Store.Lock) until unlock is called: it may be resumed on its own too. A child
// run that another process owns is an error.
func (e *execution) previousSubRun(ctx context.Context, sr *stepRun, attempt int) (sub *state.RunState, unlock func(), err error) {
	if attempt > 1 || sr.prev == nil || sr.prev.Vars[state.SubRunVar] == "" {
		return nil, nil, nil
	}
	id := sr.prev.Vars[state.SubRunVar]
	if unlock, err = e.r.d.Store.Lock(ctx, id); err != nil {
		return nil, nil, fmt.Errorf("sub-run %s: %w", id, err)
	}
	if sub, err = e.r.d.Store.Load(ctx, id); err != nil {
		unlock()
		sr.log.Warn("previous sub-run not found, starting a new one", "sub_run", id, "err", err)
		return nil, nil, nil
	}
	return sub, unlock, nil
}

func (e *execution) continueSubRun(ctx context.Context, sub *state.RunState, child *workflow.Workflow) (StepOutcome, error) {
	vars := map[string]string{state.SubRunVar: sub.ID}
	if sub.Status == state.Completed {
		return StepOutcome{Output: sub.Output, Vars: vars}, nil
	}
	sub, err := e.r.resume(ctx, sub, child, e.lineage)
	return subOutcome(child, sub, vars, err)
}

func subOutcome(child *workflow.Workflow, sub *state.RunState, vars map[string]string, err error) (StepOutcome, error) {
	out := StepOutcome{Vars: vars}
	if sub != nil {
		out.Output = sub.Output
	}
	if err != nil {
		return out, fmt.Errorf("workflow %s: %w", child.Name, err)
	}
	return out, nil
}

// resolveInputs coerces the rendered inputs of a workflow step. A missing or malformed input
// is the calling workflow's mistake, so it is fault.Invalid.
func resolveInputs(wf *workflow.Workflow, raw map[string]string) (map[string]any, error) {
	given := make(map[string]any, len(raw))
	for k, v := range raw {
		given[k] = v
	}
	values, missing, err := wf.ResolveInputs(given)
	if err != nil {
		return nil, fault.New(fault.Invalid, "inputs of workflow %s: %v", wf.Name, err)
	}
	if len(missing) > 0 {
		return nil, fault.New(fault.Invalid, "workflow %s: missing required input(s): %s", wf.Name, strings.Join(missing, ", "))
	}
	return values, nil
}
