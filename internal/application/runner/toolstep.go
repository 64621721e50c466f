package runner

import (
	"context"
	"fmt"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// tool runs a tool step: one call through the tool invoker, recorded in the step's
// tool_calls before it starts (in flight) and again when it ends. An error result fails the
// step (a denied one as fault.Denied); the call's output is the step's output and its data the step's response.
func (e *execution) tool(ctx context.Context, sr *stepRun) (StepOutcome, error) {
	if e.r.d.Tools == nil {
		return StepOutcome{}, fault.New(fault.Invalid, "tool steps need a tool invoker, and none is configured")
	}
	ts := sr.step.Tool
	scope := e.scope()
	input, err := e.render(ts.Input, scope)
	if err != nil {
		return StepOutcome{}, fmt.Errorf("input: %w", err)
	}
	rendered, err := e.renderMap(ts.Args, scope, "args")
	if err != nil {
		return StepOutcome{}, err
	}
	args := make(map[string]any, len(rendered))
	for k, v := range rendered {
		args[k] = v
	}
	req := ports.ToolRequest{
		RunID:    e.st.ID,
		Step:     sr.step.Name,
		CallID:   e.r.d.NewID(),
		Name:     ts.Tool,
		Args:     args,
		Input:    input,
		Provider: ts.Provider,
		Timeout:  sr.step.Timeout,
		Scope:    scope,
	}
	res, err := e.call(ctx, sr, req)
	switch {
	case err != nil:
		return StepOutcome{}, fmt.Errorf("tool %q: %w", ts.Tool, err)
	case res.Denied:
		// Refused by the policy, approval or a layer inside the tool: the run ends denied
		// (exit 5), not as a failed step that a retry could mend.
		return StepOutcome{Output: trimNewline(res.Output)}, fault.New(fault.Denied, "tool %q: %s", ts.Tool, res.Error)
	case !res.Succeeded():
		return StepOutcome{Output: trimNewline(res.Output), ExitCode: res.ExitCode}, fault.New(fault.Execution, "tool %q: %s", ts.Tool, res.Error)
	}
	return StepOutcome{Output: trimNewline(res.Output), ExitCode: res.ExitCode, Response: res.Data}, nil
}

// call invokes one tool and records the call in the step's state: saved at its start, before
// it runs; at its end in the record only, saved by the step's next save.
func (e *execution) call(ctx context.Context, sr *stepRun, req ports.ToolRequest) (tool.Result, error) {
	idx := -1
	_ = sr.save(ctx, func(s *state.StepState) {
		s.ToolCalls = append(s.ToolCalls, state.ToolCallRecord{
			ID: req.CallID, Tool: req.Name, Arguments: req.Args, InFlight: true,
		})
		idx = len(s.ToolCalls) - 1
	})
	meta := e.meta(ctx, req)
	e.emit(ports.Event{Kind: ports.ToolStarted, Step: req.Step, Tool: req.Name, CallID: req.CallID, Meta: meta})
	start := e.r.d.Clock.Now()
	res, err := e.r.d.Tools.Invoke(ctx, req)
	took := res.Duration
	if took == 0 {
		took = e.r.d.Clock.Now().Sub(start)
	}
	result := res.Record(err, took)
	status := "ok"
	if !result.Success {
		status = "error"
	}
	// The result is saved with the step's end (or with the error a retry records), which
	// follows at once: one sync for both. Until then nothing reports it: its event waits for
	// that save, and the next step, which may read the output, starts after it.
	sr.note(func(s *state.StepState) {
		if idx >= 0 && idx < len(s.ToolCalls) {
			s.ToolCalls[idx].Result = &result
			s.ToolCalls[idx].InFlight = false
			if res.Args != nil { // as the tool got them: coerced to the schema's types
				s.ToolCalls[idx].Arguments = tool.PlainArgs(res.Args)
			}
		}
		if s.ToolStats == nil {
			s.ToolStats = &state.ToolStats{}
		}
		s.ToolStats.Add(result)
	}, ports.Event{Kind: ports.ToolFinished, Step: req.Step, Tool: req.Name, CallID: req.CallID,
		Meta: meta, Status: status, Duration: took, Message: result.Error})
	return res, err
}

// meta is the call's one-line summary for progress, "" when there is no catalog or the tool
// has no summary (an unknown tool fails in Invoke, with its own message).
func (e *execution) meta(ctx context.Context, req ports.ToolRequest) string {
	if e.r.d.Catalog == nil {
		return ""
	}
	infos, err := e.r.d.Catalog.Describe(ctx, ports.ToolQuery{RunID: req.RunID, Step: req.Step, Names: []string{req.Name}, WorkDir: e.st.WorkDir})
	if err != nil || len(infos) != 1 || infos[0].Meta == nil {
		return ""
	}
	return infos[0].Meta(req.Args)
}
