// Package runner runs a loaded workflow's steps in order, records every step boundary in the
// run state and resumes interrupted runs. It reaches processes, tools, agents, templates and
// storage only through ports; it neither loads YAML nor prints.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// MaxWorkflowDepth is how deeply workflow steps may nest sub-workflows. Deeper nesting is
// almost always a workflow that calls itself.
const MaxWorkflowDepth = 16

// Deps are everything a Runner needs. Store, Templater, Process, Loader, Clock and NewID are
// required; the others have the defaults their comments give.
type Deps struct {
	Store     ports.StateStore
	Templater ports.Templater
	Process   ports.ProcessRunner
	// Tools runs tool steps; nil makes every tool step fail with a fault.Invalid error.
	Tools ports.ToolInvoker
	// Catalog describes the tools, for the one-line summary of a tool step's call in
	// progress events ("read src/a.go"); nil leaves the summary out.
	Catalog ports.ToolCatalog
	// Agents runs agent steps; nil makes every agent step fail with a fault.Invalid error.
	Agents AgentExecutor
	// Loader loads sub-workflows (workflow steps) and the workflow of a resumed run.
	Loader ports.WorkflowLoader
	// Events receives progress; nil discards it.
	Events ports.Events
	Clock  ports.Clock
	// NewID returns a fresh id for runs and tool calls (a UUID in production).
	NewID func() string
	// Environ is the process environment as "K=V" entries: the env namespace of templates and
	// the base environment of shell steps.
	Environ []string
	// Stat checks file_exists and dir_exists inputs; nil means os.Stat.
	Stat func(string) (fs.FileInfo, error)
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Sleep waits between retry attempts and returns early with ctx's error when ctx ends;
	// nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// StartSaveDelay defers the save that records a step as running until the step has run
	// that long; a step that ends sooner is saved once, at its end. Crash safety is the same
	// either way (resume re-runs a step that did not complete), and a workflow of quick steps
	// pays one atomic write per step instead of two. Zero saves at the start of every step.
	StartSaveDelay time.Duration
	// Fork runs run(ctx, i) for every i in [0, n) concurrently, at most limit at a time, and
	// returns when every started call has returned; it starts no more once ctx is done. The
	// children of parallel steps run through it. nil means goroutines; an engine that must
	// schedule concurrency itself (a durable-execution workflow) passes its own, and the
	// context each call gets may carry what that engine needs.
	Fork func(ctx context.Context, n, limit int, run func(ctx context.Context, i int))
	// WithTimeout bounds one attempt of a step with a timeout; nil means context.WithTimeout.
	// An engine whose timers must not run on the wall clock (a replayed workflow) passes one
	// that records the timeout for its activities instead of arming a timer.
	WithTimeout func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// SubRun runs the child run of a workflow step (req.ID names it, req.Parent its parent);
	// nil runs it in this runner, with this store. An engine that runs sub-workflows as runs
	// of their own (Temporal child workflows) passes one; it returns the child's final state,
	// and may run it with Run.
	SubRun func(ctx context.Context, req Request) (*state.RunState, error)
	// Pause, asked between two top-level steps, says to stop the run there and go on in
	// another execution (Continue): a durable engine whose history would otherwise grow past
	// its limits. The run then returns ErrPaused with its state saved, still running. nil
	// never pauses.
	Pause func() bool
}

// ErrPaused is the error of a run stopped by Deps.Pause: not an end, its state goes on with
// Continue.
var ErrPaused = errors.New("run paused between steps, to be continued")

// Runner runs workflows. It is safe for concurrent use: each run keeps its own state.
type Runner struct {
	d   Deps
	env map[string]string
}

// New returns a Runner, or an error of kind fault.System naming every missing required
// dependency.
func New(d Deps) (*Runner, error) {
	var missing []string
	for _, dep := range []struct {
		name string
		nil  bool
	}{
		{"Store", d.Store == nil},
		{"Templater", d.Templater == nil},
		{"Process", d.Process == nil},
		{"Loader", d.Loader == nil},
		{"Clock", d.Clock == nil},
		{"NewID", d.NewID == nil},
	} {
		if dep.nil {
			missing = append(missing, dep.name)
		}
	}
	if len(missing) > 0 {
		return nil, fault.New(fault.System, "runner: missing dependencies: %s", strings.Join(missing, ", "))
	}
	if d.Events == nil {
		d.Events = ports.EventsFunc(func(ports.Event) {})
	}
	if d.Stat == nil {
		d.Stat = os.Stat
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Sleep == nil {
		d.Sleep = sleep
	}
	if d.Fork == nil {
		d.Fork = fork
	}
	if d.WithTimeout == nil {
		d.WithTimeout = context.WithTimeout
	}
	return &Runner{d: d, env: environMap(d.Environ)}, nil
}

// Request is one run to start.
type Request struct {
	Workflow *workflow.Workflow
	// Inputs are the workflow's inputs, already checked and coerced (workflow.ResolveInputs).
	Inputs map[string]any
	// WorkDir is where shell steps run and what relative paths (step dir, file_exists inputs)
	// resolve against; empty means the process's current directory.
	WorkDir string
	// Parent is the id of the run that started this one, if any.
	Parent string
	// ID is the run's id; empty means a fresh one (Deps.NewID). An engine that names runs
	// itself (a Temporal workflow id) passes it.
	ID string
	// Lineage names the workflows from the root run down to the parent of this one, for the
	// nesting limit (MaxWorkflowDepth) of a sub-run started through Deps.SubRun.
	Lineage []string
	// Sources are the digests of the files the workflow was loaded from (see
	// state.RunState.Sources), recorded for resume to compare.
	Sources map[string]string
}

// Run runs every step of the workflow and returns the final run state. The state is saved
// at the start and end of the run and of every step (and around every tool call). A failed
// step makes the run fail with an error naming the step (kind fault.Execution unless the
// cause carries its own kind); a step with continue_on_error is recorded failed and the run
// goes on, and can still complete. A cancelled ctx leaves the run interrupted, saved, and an
// error wrapping ctx's error. After the last step the workflow's output template becomes the
// run's Output. Missing file_exists/dir_exists paths are fault.Usage errors before anything is
// saved. The returned state is non-nil whenever the run started, also on error.
//
// Templates see inputs, env, workflow {name, version, description, dir}, run {id, dir} (dir
// is the work directory) and states: every step that ran to an end (completed, failed or
// skipped), under its name and its output_var, with output, status, error, response,
// exit_code, tokens, tool_calls and tool_stats.
func (r *Runner) Run(ctx context.Context, req Request) (*state.RunState, error) {
	if req.Workflow == nil {
		return nil, fault.New(fault.System, "run: no workflow")
	}
	id := req.ID
	if id == "" {
		id = r.d.NewID()
	}
	return r.run(ctx, req, id, req.Lineage)
}

// Continue runs the rest of a run that Deps.Pause stopped, from the state it returned, as
// if it had not stopped: steps that ended keep their outputs, the next ones run. Unlike a
// resume it is the same segment of the same run: nothing is counted, no start announced.
func (r *Runner) Continue(ctx context.Context, st *state.RunState, wf *workflow.Workflow, lineage []string) (*state.RunState, error) {
	if st == nil || wf == nil {
		return st, fault.New(fault.System, "continue: no run state or workflow")
	}
	if st.States == nil {
		st.States = map[string]*state.StepState{}
	}
	unlock, err := r.d.Store.Lock(context.WithoutCancel(ctx), st.ID)
	if err != nil {
		return st, fmt.Errorf("continue %s: %w", st.ID, err)
	}
	defer unlock()
	return r.execute(ctx, newExecution(r, st, wf, lineage), continued)
}

// continued is the how of execute for Continue: the run goes on unannounced.
const continued = "\x00continued"

// Resume continues the run with the given id as ResumeWith does, with no overrides.
func (r *Runner) Resume(ctx context.Context, runID string) (*state.RunState, error) {
	return r.ResumeWith(ctx, runID, ResumeOptions{})
}

// ResumeOptions are what a resume checks and what it may overlook.
type ResumeOptions struct {
	// Sources are the digests of the files of the run's workflow as they are now: those the
	// run recorded and those the workflow loads now (state.ChangedSources). Nil skips the
	// check.
	Sources map[string]string
	// Force resumes a run whose files changed since it started; the run records it.
	Force bool
	// FromLastValid resumes a run whose journal is damaged from its last valid line, with a
	// store that can (ports.StateRecovery); the run records what was left out.
	FromLastValid bool
}

// ResumeWith continues the run with the given id: steps already completed or skipped keep
// their outputs and are not run again; the others run in order as in Run. The run keeps its
// id and state file and counts one more resume. It owns the run (Store.Lock) before reading
// it and until it ends: a run another process owns is a *ports.RunBusyError. Resuming a
// completed run is a fault.Usage error, and so is a run whose files changed since it started
// (opts.Sources) unless opts.Force.
func (r *Runner) ResumeWith(ctx context.Context, runID string, opts ResumeOptions) (*state.RunState, error) {
	unlock, err := r.d.Store.Lock(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", runID, err)
	}
	defer unlock()
	st, dropped, err := ports.LoadRun(ctx, r.d.Store, runID, opts.FromLastValid)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", runID, err)
	}
	if st.Status == state.Completed {
		return st, fault.New(fault.Usage, "run %s already completed: nothing to resume", runID)
	}
	now := r.d.Clock.Now()
	if dropped != "" {
		st.Overrides = append(st.Overrides, state.Override{At: now, Flag: state.FromLastValidFlag, Dropped: dropped})
	}
	if changed := state.ChangedSources(st.Sources, opts.Sources); len(changed) > 0 {
		if !opts.Force {
			return st, fault.New(fault.Usage, "run %s: its workflow changed since it started: %s; resume with --force to run the remaining steps with the files as they are now",
				runID, strings.Join(changed, ", "))
		}
		st.Overrides = append(st.Overrides, state.Override{At: now, Flag: state.ForceFlag, Changed: changed})
		st.Sources = opts.Sources
	}
	if st.Sources == nil {
		st.Sources = opts.Sources // a run of an earlier version: compare with these from now on
	}
	wf, err := r.load(st.WorkflowFile)
	if err != nil {
		return st, fmt.Errorf("resume %s: %w", runID, err)
	}
	return r.resume(ctx, st, wf, nil)
}

// load loads and compiles a workflow file: its templates checked and the inputs they use
// without declaring them made implicit inputs, as `awf validate` does (compile.Workflow).
func (r *Runner) load(path string) (*workflow.Workflow, error) {
	wf, err := r.d.Loader.Load(path)
	if err != nil {
		return nil, err
	}
	if _, err := compile.Workflow(r.d.Templater, wf); err != nil {
		return nil, err
	}
	return wf, nil
}

func (r *Runner) run(ctx context.Context, req Request, id string, lineage []string) (*state.RunState, error) {
	wf := req.Workflow
	if err := r.checkPaths(wf, req.Inputs, req.WorkDir); err != nil {
		return nil, err
	}
	now := r.d.Clock.Now()
	st := &state.RunState{
		ID:           id,
		Workflow:     wf.Name,
		WorkflowFile: wf.Path,
		WorkDir:      req.WorkDir,
		Status:       state.Running,
		Inputs:       maps.Clone(req.Inputs),
		StartedAt:    now,
		UpdatedAt:    now,
		Parent:       req.Parent,
		Sources:      req.Sources,
		States:       map[string]*state.StepState{},
	}
	if st.Inputs == nil {
		st.Inputs = map[string]any{}
	}
	// A run cancelled before it starts is still recorded, as interrupted: it needs its lock.
	unlock, err := r.d.Store.Lock(context.WithoutCancel(ctx), id)
	if err != nil { // a state directory that cannot be written: the run fails as its first save would
		err = fmt.Errorf("run %s: %w", id, err)
		st.Status, st.FinishedAt, st.Error = state.Failed, &now, err.Error()
		return st, err
	}
	defer unlock()
	return r.execute(ctx, newExecution(r, st, wf, lineage), "")
}

func (r *Runner) resume(ctx context.Context, st *state.RunState, wf *workflow.Workflow, lineage []string) (*state.RunState, error) {
	st.Resumed++
	st.StartSegment(r.d.Clock.Now())
	st.Status = state.Running
	st.Error = ""
	st.Output = ""
	st.FinishedAt = nil
	if st.States == nil {
		st.States = map[string]*state.StepState{}
	}
	return r.execute(ctx, newExecution(r, st, wf, lineage), "resumed")
}

// execute runs a prepared execution from its first save to its last.
func (r *Runner) execute(ctx context.Context, e *execution, how string) (*state.RunState, error) {
	e.mu.Lock()
	err := e.saveLocked(ctx)
	e.mu.Unlock()
	if err != nil {
		return e.st, err
	}
	if how != continued {
		e.log.Info("run started", "resumed", e.st.Resumed) // e.log names the run and workflow
		e.emit(ports.Event{Kind: ports.RunStarted, Message: how})
	}
	err = e.steps(ctx, e.wf.Steps)
	if errors.Is(err, ErrPaused) {
		return e.st, err
	}
	if err == nil {
		err = e.output()
	}
	return e.st, e.finish(ctx, err)
}

// checkPaths enforces file_exists and dir_exists on the inputs given.
func (r *Runner) checkPaths(wf *workflow.Workflow, inputs map[string]any, workDir string) error {
	for _, in := range wf.Inputs {
		if !in.FileExists && !in.DirExists {
			continue
		}
		v, ok := inputs[in.Name]
		if !ok || v == nil {
			continue
		}
		p, ok := v.(string)
		if !ok {
			return fault.New(fault.Usage, "input %q: want a path, got %T", in.Name, v)
		}
		info, err := r.d.Stat(resolvePath(workDir, p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fault.New(fault.Usage, "input %q: %s does not exist", in.Name, p)
		case err != nil:
			return fault.New(fault.Usage, "input %q: %w", in.Name, err)
		case in.DirExists && !info.IsDir():
			return fault.New(fault.Usage, "input %q: %s is not a directory", in.Name, p)
		case in.FileExists && info.IsDir():
			return fault.New(fault.Usage, "input %q: %s is a directory, want a file", in.Name, p)
		}
	}
	return nil
}

func environMap(environ []string) map[string]string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
