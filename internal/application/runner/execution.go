package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// execution is one run in progress. mu guards st and states: parallel steps record their
// children concurrently, and Save runs holding mu so that no half-updated state is written.
type execution struct {
	r       *Runner
	wf      *workflow.Workflow
	log     *slog.Logger
	lineage []string // names of the workflows from the root run down to this one

	// Read-only after construction, shared by every scope.
	inputs  map[string]any
	wfScope map[string]any
	runDir  map[string]any
	aliases map[string][]string // step name -> its output_var, for rebuilding states

	mu sync.Mutex
	st *state.RunState
	// states is the states namespace of templates. Scopes share it without copying. While
	// parallel steps run (shared > 0) they may be reading it, and it is left as it is: what
	// steps publish meanwhile waits in pending, and goes into states when the outermost
	// parallel step ends (children see the steps before their block, not their siblings).
	// Otherwise nobody else reads it and it is updated in place. Either way the cost of a
	// step does not depend on the run's length (a copy of states per step of a parallel
	// block made a block of n children cost n times the run's steps).
	states  map[string]any
	pending map[string]any
	shared  int
	saveErr error
}

func newExecution(r *Runner, st *state.RunState, wf *workflow.Workflow, lineage []string) *execution {
	e := &execution{
		r:       r,
		wf:      wf,
		st:      st,
		log:     r.d.Log.With("run_id", st.ID, "workflow", wf.Name),
		lineage: append(lineage[:len(lineage):len(lineage)], wf.Name),
		inputs:  st.Inputs,
		wfScope: map[string]any{
			"name": wf.Name, "version": wf.Version, "description": wf.Description, "dir": wf.Dir,
		},
		runDir:  map[string]any{"id": st.ID, "dir": st.WorkDir},
		aliases: map[string][]string{},
	}
	collectAliases(wf.Steps, e.aliases)
	e.states = e.rebuildStates()
	return e
}

func collectAliases(steps []workflow.Step, into map[string][]string) {
	for i := range steps {
		s := &steps[i]
		if s.OutputVar != "" {
			into[s.Name] = append(into[s.Name], s.OutputVar)
		}
		if s.Parallel != nil {
			collectAliases(s.Parallel.Steps, into)
		}
	}
}

// rebuildStates makes the states namespace from the recorded steps (for a resumed run).
func (e *execution) rebuildStates() map[string]any {
	states := map[string]any{}
	for name, s := range e.st.States {
		if !visible(s.Status) {
			continue
		}
		entry := stateEntry(s)
		states[name] = entry
		for _, alias := range e.aliases[name] {
			states[alias] = entry
		}
	}
	return states
}

// visible reports whether a step in this status is seen by later templates: steps that ran
// to an end, whatever it was; not steps that never ran or were cut short.
func visible(s state.Status) bool {
	return s == state.Completed || s == state.Failed || s == state.Skipped
}

// scope returns what templates see now. The maps are shared: a scope is valid until the step
// that asked for it ends (see states).
func (e *execution) scope() ports.Scope {
	e.mu.Lock()
	states := e.states
	e.mu.Unlock()
	return ports.Scope{
		"inputs":   e.inputs,
		"states":   states,
		"env":      e.r.env,
		"workflow": e.wfScope,
		"run":      e.runDir,
	}
}

// publishLocked makes a finished step visible to later templates. Callers hold mu.
func (e *execution) publishLocked(name string, s *state.StepState) {
	entry := stateEntry(s)
	into := e.states
	if e.shared > 0 {
		if e.pending == nil {
			e.pending = map[string]any{}
		}
		into = e.pending
	}
	into[name] = entry
	for _, alias := range e.aliases[name] {
		into[alias] = entry
	}
}

// share marks the states namespace as read concurrently (n = 1) or no longer (n = -1): when
// the last parallel step ends, what was published meanwhile becomes visible.
func (e *execution) share(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shared += n; e.shared == 0 && e.pending != nil {
		maps.Copy(e.states, e.pending)
		e.pending = nil
	}
}

// saveLocked writes the whole run state, as at the run's start and end. Callers hold mu. The
// save ignores ctx's cancellation: an interrupted run must still be recorded. The first
// failure is kept and ends the run.
func (e *execution) saveLocked(ctx context.Context) error {
	return e.persistLocked(ctx, e.r.d.Store.Save)
}

// saveStepLocked writes the run state after a change to the named step's record alone (its
// start, its end, its tool calls), through the store's journal when it has one (see
// ports.StepJournal), so that a step's save does not cost more in a longer run. Every change
// the runner makes to a step is saved by a save of that step. Callers hold mu.
func (e *execution) saveStepLocked(ctx context.Context, name string) error {
	j, ok := e.r.d.Store.(ports.StepJournal)
	if !ok {
		return e.saveLocked(ctx)
	}
	return e.persistLocked(ctx, func(ctx context.Context, st *state.RunState) error {
		return j.AppendStep(ctx, st, name)
	})
}

// persistLocked stamps the run and writes it with write, as saveLocked describes.
func (e *execution) persistLocked(ctx context.Context, write func(context.Context, *state.RunState) error) error {
	e.st.UpdatedAt = e.r.d.Clock.Now()
	err := write(context.WithoutCancel(ctx), e.st)
	if err == nil {
		return nil
	}
	err = fault.Wrap(fault.System, fmt.Errorf("save run %s: %w", e.st.ID, err))
	if e.saveErr == nil {
		e.saveErr = err
	}
	e.log.Error("save state", "err", err)
	return err
}

func (e *execution) failedSave() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.saveErr
}

// update applies fn to the named step's record and saves it, holding mu.
func (e *execution) update(ctx context.Context, name string, fn func(*state.StepState)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.st.Step(name))
	return e.saveStepLocked(ctx, name)
}

func (e *execution) emit(ev ports.Event) {
	ev.Time = e.r.d.Clock.Now()
	ev.RunID = e.st.ID
	e.r.d.Events.Emit(ev)
}

// steps runs steps in order until one fails.
func (e *execution) steps(ctx context.Context, steps []workflow.Step) error {
	ran := false // a step ran in this execution: only then may it pause (Deps.Pause)
	for i := range steps {
		if err := e.failedSave(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted before step %q: %w", steps[i].Name, context.Cause(ctx))
		}
		if !e.done(steps[i].Name) {
			if ran && e.r.d.Pause != nil && e.r.d.Pause() {
				return ErrPaused
			}
			ran = true
		}
		if err := e.step(ctx, &steps[i]); err != nil {
			return err
		}
	}
	return e.failedSave()
}

// output evaluates the workflow's output template.
func (e *execution) output() error {
	if e.wf.Output == "" {
		return nil
	}
	out, err := e.r.d.Templater.Render(e.wf.Output, e.scope())
	if err != nil {
		return fmt.Errorf("workflow output: %w", err)
	}
	e.mu.Lock()
	e.st.Output = out
	e.mu.Unlock()
	return nil
}

// finish records the run's end and returns the run's error, classified.
func (e *execution) finish(ctx context.Context, err error) error {
	status := state.Completed
	switch {
	case err != nil && ctx.Err() != nil:
		status = state.Interrupted
	case err != nil:
		status = state.Failed
	}
	if err != nil {
		err = classify(err, fault.Execution)
	}
	e.mu.Lock()
	now := e.r.d.Clock.Now()
	e.st.Status = status
	e.st.FinishedAt = &now
	if err != nil {
		e.st.Error = err.Error()
	}
	active := e.st.Duration()
	saveErr := e.saveLocked(ctx)
	e.mu.Unlock()
	if err == nil {
		err = saveErr
	}
	ev := ports.Event{Kind: ports.RunFinished, Status: string(status), Duration: active}
	if err != nil {
		ev.Message = err.Error()
	}
	e.emit(ev)
	e.log.Info("run finished", "status", status, "err", err)
	return err
}

// classify gives err kind k unless something in its chain already has a kind: layers below
// know better and are never reclassified.
func classify(err error, k fault.Kind) error {
	var kinded interface{ FaultKind() fault.Kind }
	if errors.As(err, &kinded) {
		return err
	}
	return fault.Wrap(k, err)
}

// resolvePath makes p absolute against base; an empty base leaves relative paths to the
// process's current directory.
func resolvePath(base, p string) string {
	if p == "" {
		return base
	}
	if filepath.IsAbs(p) || base == "" {
		return p
	}
	return filepath.Join(base, p)
}
