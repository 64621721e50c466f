package runner

import (
	"context"
	"log/slog"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// AgentExecutor runs agent steps: the agent loop of DESIGN section 4 (model turns, governed
// tool calls). The runner owns the step's lifecycle around it: when, retries, timeout (ctx's
// deadline), status, events for the step, and saving. Implementations must be safe for
// concurrent use: steps of a parallel step run at once.
type AgentExecutor interface {
	// Execute runs one attempt of an agent step. The returned outcome's Output, Response,
	// Tokens and Conversation are recorded when it returns; tool calls must be recorded as
	// they happen through sc.Save. An error fails the attempt.
	Execute(ctx context.Context, sc StepContext) (StepOutcome, error)
}

// StepContext is what an agent step gets from the run. Its functions are safe for
// concurrent use.
type StepContext struct {
	RunID    string
	Workflow *workflow.Workflow
	Step     *workflow.Step
	// Scope is what templates of this step see (inputs, states, env, workflow, run). It is
	// shared, not copied: read it only until Execute returns, and never modify it.
	Scope   ports.Scope
	WorkDir string
	// Attempt counts from 1; a retried step is executed again with the next number.
	Attempt int
	// Previous is the step's record before this execution of the step began: non-nil when
	// a resumed run or a retry runs the step again. Tool calls in it with a result completed
	// and must not be executed again; InFlight ones were cut short. The live record starts
	// with the same ToolCalls, ToolStats, Tokens and Conversation.
	Previous *state.StepState
	// Save applies mutate to the step's live record under the run's lock, then saves the run
	// state: through the store's journal (ports.StepJournal) when it has one, which writes
	// only what changed in the step. Call it after every tool call (and before, marking it in
	// flight), so that a crash loses nothing that happened. mutate must change nothing but
	// the step's record, and must not block or keep the pointer.
	Save func(ctx context.Context, mutate func(*state.StepState)) error
	// Lookup returns a copy of another step's record (for continue_from); false when that
	// step has no record. The slices and maps in the copy are shared: do not modify them.
	Lookup func(step string) (state.StepState, bool)
	// Emit reports progress (tool calls, model responses); it fills in Time, RunID and, when
	// empty, Step.
	Emit func(ports.Event)
	Log  *slog.Logger
}

func (e *execution) agent(ctx context.Context, sr *stepRun, attempt int) (StepOutcome, error) {
	if e.r.d.Agents == nil {
		return StepOutcome{}, fault.New(fault.Invalid, "agent steps need an agent executor, and none is configured")
	}
	var prev *state.StepState
	if sr.prev != nil {
		p := *sr.prev
		prev = &p
	}
	if attempt > 1 {
		e.mu.Lock()
		p := *e.st.Step(sr.step.Name)
		e.mu.Unlock()
		prev = &p
	}
	return e.r.d.Agents.Execute(ctx, StepContext{
		RunID:    e.st.ID,
		Workflow: e.wf,
		Step:     sr.step,
		Scope:    e.scope(),
		WorkDir:  e.st.WorkDir,
		Attempt:  attempt,
		Previous: prev,
		Save:     sr.save,
		Lookup:   e.lookup,
		Emit: func(ev ports.Event) {
			if ev.Step == "" {
				ev.Step = sr.step.Name
			}
			e.emit(ev)
		},
		Log: sr.log,
	})
}

func (e *execution) lookup(name string) (state.StepState, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.st.States[name]
	if !ok {
		return state.StepState{}, false
	}
	return *s, true
}
